// `krc draw FILE -o out.svg|png|dot [--word "a b a" --attention]`: a picture of a compiled
// network, or of every head's attention pattern on one word (tools/draw/network_drawing.hpp).
#include <iostream>
#include <memory>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/weights_file.hpp"
#include "krc/runtime/word_run.hpp"
#include "network_drawing.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

struct DrawArguments {
  std::string file, output;
  std::vector<std::string> word;
  bool attention = false;
};

int run_draw(const DrawArguments& a) {
  const DrawFormat format = draw_format_from_path(a.output);
  front_door::refuse_output_over_inputs(a.output, {a.file});
  if (a.attention && a.word.empty())
    throw InputError("command line", "--attention", "needs the word to run: --word \"a b a\"");
  if (!a.attention && !a.word.empty())
    throw InputError("command line", "--word", "only the attention picture (--attention) uses it");
  const Network network = load_network(a.file);
  std::vector<LetterId> word;
  if (a.attention)
    word = parse_word(a.word, automaton_from_json(network.automaton, a.file), "--word");
  const std::string picture =
      draw_picture(network, a.attention ? &word : nullptr, format, "--word");
  front_door::write_output(a.output, picture, {.inputs = {a.file}});
  std::cout << "wrote " << a.output << " (" << to_string(format) << ", " << picture.size()
            << " bytes)\n";
  return 0;
}

const RegisterCommand draw_registration{Command{
    "draw",
    "Draw a network (layers, heads and MLP blocks by role, residual lanes) or its attention", 46,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<DrawArguments>();
      sub.footer(
          "The network picture: layers left to right; every attention head a{L}.h{H} and MLP\n"
          "block m{L} (the circuit file's names) is a box filled by the colour of its role's\n"
          "family and labelled with its typed role (cascade level, component, counter, scan\n"
          "step); an average head's box is dashed. Between sublayers the residual stream is a\n"
          "column of lanes, one per named residual subspace (named in the first and last\n"
          "column, numbered between); edges run from the lanes a head reads (q blue, k green,\n"
          "v orange) and into the lanes it writes, as the circuit file records them. The legend\n"
          "lists the role colours and which layers hold each level of the cascade.\n"
          "The attention picture (--attention --word): for each head a grid, query position\n"
          "down, key position across, darker = more weight, computed by a dense float64 pass\n"
          "with the attention the network was compiled for; each cell's tooltip holds its\n"
          "weight. Laid out and rendered by the Graphviz library (dot).\n"
          "Examples:\n"
          "  krc draw gridworld_9.safetensors -o gridworld_9.svg\n"
          "  krc draw parity.safetensors --attention --word \"1 0 1 1\" -o attention.png");
      sub.add_option("FILE", a->file, "weights file (.safetensors) written by krc compile")
          ->required();
      sub.add_option("-o,--output", a->output,
                     "the picture; its format from the extension: .svg, .png, or .dot (the "
                     "Graphviz graph itself)")
          ->required();
      sub.add_flag("--attention", a->attention,
                   "draw every head's attention pattern on --word instead of the network");
      sub.add_option("--word", a->word,
                     "the word of --attention: one letter per argument, or one string of "
                     "letters separated by spaces (at most 48 letters and max_len)");
      return [a] { return run_draw(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
