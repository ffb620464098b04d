// `krc decompose AUT|--regex P [--alphabet L] [--format text|json|dot] [--input-format F]
// [--complete] [--initial S] [--draw -o levels.svg|png|dot]`:
// the holonomy (Krohn-Rhodes) decomposition of an automaton: its levels, their holonomy
// groups, and the skeleton; --draw pictures the levels (tools/draw/network_drawing.hpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "automaton_input.hpp"
#include "command.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/transformation_semigroup.hpp"
#include "krc/decompose/holonomy.hpp"
#include "krc/decompose/holonomy_report.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "network_drawing.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace krc::cli {
namespace {

struct DecomposeArguments {
  std::string input, output = "-", format = "text";
  LoadOptions load;
  bool no_tables = false, quiet = false, draw = false;
  std::size_t max_images = DecomposeOptions{}.max_images;
  std::size_t max_image_mib = DecomposeOptions{}.max_image_bytes >> 20;
  std::size_t max_tuples = DecomposeOptions{}.max_tuples;
  std::size_t max_table_cells = DecomposeOptions{}.max_table_cells;
  std::size_t max_elements = kDefaultReportElements;
  std::size_t max_drawn_sets = kDefaultDrawnSets;
};

int run_decompose(const DecomposeArguments& a) {
  const auto start = std::chrono::steady_clock::now();
  // The picture's format comes from the output's extension, checked before any work.
  std::optional<DrawFormat> picture;
  if (a.draw) {
    if (a.output == "-")
      throw InputError("command line", "--draw", "needs a picture file: -o levels.svg|png|dot");
    picture = draw_format_from_path(a.output);
  }
  front_door::refuse_output_over_inputs(a.output, {a.input});
  const Automaton automaton = load_automaton(a.input, a.load);

  DecomposeOptions options;
  options.max_images = a.max_images;
  options.max_image_bytes = a.max_image_mib << 20;
  options.max_tuples = a.max_tuples;
  options.max_table_cells = a.max_table_cells;
  options.build_tables = !a.no_tables && a.format != "dot" && !a.draw;
  if (!a.quiet)
    options.progress = [&](const std::string& message) {
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << "krc: decompose: " << message << " (" << static_cast<int>(seconds) << " s)\n";
    };
  // The library names the limit; the command line also names the options that change it.
  const HolonomyDecomposition decomposition = [&] {
    try {
      return HolonomyDecomposition::compute(automaton, options);
    } catch (const DecomposeLimitError& e) {
      throw LimitError(std::string(e.what()) + "; " + decompose_limit_hint(e));
    }
  }();

  std::string out;
  if (picture) {
    out = draw_decomposition(decomposition_to_json(decomposition), *picture);
  } else if (a.format == "dot") {
    try {
      out = decomposition_to_dot(decomposition, a.max_drawn_sets);
    } catch (const LimitError& e) {
      throw LimitError(std::string(e.what()) + "; --max-drawn-sets (now " +
                       std::to_string(a.max_drawn_sets) + ") raises the limit");
    }
  } else {
    nlohmann::json summary = decomposition_to_json(decomposition);
    add_semigroup_facts(summary, decomposition, a.max_elements);
    out = a.format == "json" ? summary.dump(1) + "\n" : decomposition_text(summary);
  }
  front_door::write_output(a.output, out, {.inputs = {a.input}});
  return 0;
}

// The bounds of the decomposition's phases (images, tables, the semigroup, the drawing).
void add_limit_options(CLI::App& sub, DecomposeArguments& a) {
  sub.add_option("--max-images", a.max_images, "Limit on the images of the state set")
      ->check(integer_in(1, 1LL << 62))
      ->capture_default_str();
  sub.add_option("--max-image-memory", a.max_image_mib,
                 "Limit on the memory the images take, in MiB (sets of many states reach "
                 "it before --max-images)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24))
      ->capture_default_str();
  sub.add_option("--max-tuples", a.max_tuples,
                 "Limit on the reachable coordinate tuples of the action tables")
      ->check(integer_in(1, 1LL << 62))
      ->capture_default_str();
  sub.add_option("--max-table-cells", a.max_table_cells,
                 "Limit on the integers the action tables hold (many levels reach it before "
                 "--max-tuples)")
      ->check(integer_in(1, 1LL << 62))
      ->capture_default_str();
  sub.add_option("--max-elements", a.max_elements,
                 "Enumerate the transformation semigroup (for its size) up to this many elements")
      ->capture_default_str()
      ->check(integer_in(1, 1LL << 32));
  sub.add_option("--max-drawn-sets", a.max_drawn_sets,
                 "With --format dot: limit on the sets of the skeleton to draw")
      ->check(integer_in(1, 1LL << 32))
      ->capture_default_str();
}

const RegisterCommand decompose_registration{
    {"decompose", "Krohn-Rhodes (holonomy) decomposition: levels, holonomy groups, skeleton", 40,
     [](CLI::App& sub) -> std::function<int()> {
       auto a = std::make_shared<DecomposeArguments>();
       CLI::Option* file = sub.add_option("automaton", a->input,
                                          "Description file: krc JSON, Graphviz DOT (AALpy, "
                                          "LearnLib), JFLAP .jff or HOA; - "
                                          "for stdin")
                               ->required();
       CLI::Option* format =
           sub.add_option(
                  "--format", a->format,
                  "text: one line per level, like SgpDec; json: the summary other programs read;\n"
                  "dot: the skeleton for Graphviz")
               ->check(CLI::IsMember({"text", "json", "dot"}))
               ->capture_default_str();
       sub.add_option("-o,--output", a->output, "File to write; - for stdout")
           ->capture_default_str()
           ->check(nonempty_path());
       add_automaton_input_options(sub, a->load, file);
       sub.add_flag("--no-tables", a->no_tables,
                    "Skip the complete action tables (skeleton and groups only)");
       add_limit_options(sub, *a);
       sub.add_flag("--draw", a->draw,
                    "Draw the levels instead (-o levels.svg, .png, or .dot for the Graphviz "
                    "graph): level 1 on top, one box per component with its tiles, class, "
                    "representative and group, laid out and rendered by the Graphviz library")
           ->excludes(format);
       sub.add_flag("-q,--quiet", a->quiet, "No progress messages on stderr");
       return [a] { return run_decompose(*a); };
     }}};

}  // namespace
}  // namespace krc::cli
