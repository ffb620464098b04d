#include "suite.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/interrupt.hpp"
#include "krc/automata/machine_outputs.hpp"
#include "krc/automata/thousands.hpp"
#include "krc/automata/version.hpp"
#include "krc/automata/zoo.hpp"
#include "krc/backend/compile.hpp"
#include "krc/frontend/load_automaton.hpp"
#include "krc/runtime/circuit.hpp"
#include "krc/runtime/gpt2_export.hpp"
#include "krc/runtime/network_summary.hpp"
#include "krc/runtime/verifier.hpp"
#include "krc/runtime/weights_file.hpp"

namespace krc::front_door {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What every network of a suite is verified on, besides the request's random words: all words
// of the longest length with at most this many words, seed 1, the default arithmetic.
constexpr long long kSuiteExhaustiveWords = 4096;
constexpr std::uint64_t kSuiteSeed = 1;

// An automaton of the suite: its name in the model names and where it came from.
struct Member {
  std::string name, source;
  Automaton automaton;
  MachineOutputs outputs;
};

// A name usable in a path and as one field of "<automaton>.<strategy>.<norm>".
std::string path_name(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return out.empty() ? std::string("automaton") : out;
}

// A file's name without its directory and its extensions ("a/b/tomita.dot.gz": "tomita").
std::string file_stem(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

void check_names(Door door, const std::string& keyword, const std::vector<std::string>& values,
                 const std::vector<std::string>& names) {
  if (values.empty())
    throw std::invalid_argument(option_name(door, keyword) + ": give at least one");
  for (std::size_t i = 0; i < values.size(); ++i) {
    check_member(door, keyword, values[i], names);
    if (std::find(values.begin(), values.begin() + static_cast<long>(i), values[i]) !=
        values.begin() + static_cast<long>(i))
      throw std::invalid_argument(option_name(door, keyword) + " names \"" + values[i] +
                                  "\" twice");
  }
}

std::vector<Member> members(const SuiteRequest& r) {
  std::vector<Member> list;
  auto zoo = [&](const std::string& family, std::optional<int> n) {
    Automaton a = zoo_automaton(family, n);
    list.push_back({a.name(), "zoo:" + a.name(), std::move(a), {}});
  };
  if (r.set == "small") {
    zoo("parity", std::nullopt);
    zoo("flipflop", 2);
    zoo("cyclic", 3);
    zoo("gridworld", 4);
  } else if (r.set == "zoo") {
    for (const ZooFamily& f : zoo_families()) zoo(f.name, std::nullopt);
  }
  for (const std::string& file : r.files) {
    interruption_point();
    MachineOutputs outputs;
    LoadOptions load;
    load.completion.outputs = &outputs;
    Automaton a = load_automaton(file, load);
    list.push_back({path_name(file_stem(file)), file, std::move(a), std::move(outputs)});
  }
  for (std::size_t i = 0; i < list.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (list[i].name == list[j].name)
        throw InputError(list[i].source, "",
                         "its models would be named \"" + list[i].name + "\" as " + list[j].source +
                             "'s are; rename one of the files");
  return list;
}

// One model's files and its manifest row.
struct Model {
  std::vector<DirectoryFile> files;
  json row;
};

// Compiles `prepared`; its errors name the model `id` first.
CompileResult compile_model(const std::string& id, const PreparedCompile& prepared) {
  try {
    return compile(prepared.machine.automaton, prepared.options);
  } catch (const InputError& e) {  // the model's name, then the message that names the file
    throw InputError(id, "", e.what());
  } catch (const LimitError& e) {
    throw LimitError(id + ": " + e.what());
  }
}

// Verifies `network` (as its file holds it) and adds verify.json to `model`; SuiteMismatch when
// the network is wrong, so that no suite holds a wrong model.
VerifyReport verify_model(const std::string& id, const Network& network, const Automaton& automaton,
                          const SuiteRequest& r, Model& model) {
  VerifyOptions verify_options;
  verify_options.max_exhaustive_words = kSuiteExhaustiveWords;
  verify_options.random_words = r.verify_random;
  verify_options.seed = kSuiteSeed;
  verify_options.forward.attention = network.attention;
  const VerifyReport report = verify(network, automaton, verify_options);
  json verified = report_to_json(report, automaton);
  // Timing and threads differ from run to run; the suite's files do not.
  verified.erase("seconds");
  verified.erase("threads");
  if (!report.ok())
    throw SuiteMismatch(id + ": the verification found " + with_thousands(report.wrong_positions) +
                        " of " + with_thousands(report.positions) +
                        " positions wrong: " + format_report(report, automaton));
  model.files.emplace_back(id + "/verify.json", verified.dump(1) + "\n");
  return report;
}

// The manifest row's fields about the GPT-2 checkpoint: where it is, the formats kept, or why
// there is none (a network GPT-2 cannot hold is no error of the suite).
struct Gpt2Fields {
  json path = nullptr, kept = json::array(), missing = json::object();
};

// Adds the GPT-2 checkpoint of `network` to `model` when it has one.
Gpt2Fields add_gpt2(const std::string& id, const Network& network, const std::string& weights_path,
                    const SuiteRequest& r, Model& model) {
  Gpt2Fields fields;
  try {
    Gpt2Checkpoint checkpoint = gpt2_checkpoint(network, weights_path, {r.max_bytes, false});
    fields.path = id + "/gpt2";
    for (const Gpt2Format& f : checkpoint.formats)
      if (f.kept) fields.kept.push_back(f.name);
    for (auto& [name, contents] : checkpoint.files)
      model.files.emplace_back(id + "/gpt2/" + name, std::move(contents));
  } catch (const InputError& e) {
    fields.missing["gpt2"] = e.problem();
  } catch (const LimitError& e) {
    fields.missing["gpt2"] = e.what();
  }
  return fields;
}

// The manifest row's fields about the network itself. (json objects keep their keys sorted, so
// the row's bytes do not depend on which part adds a field.)
json network_fields(const Network& network, const VerifyReport& report) {
  const json summary = network_summary(network);
  return {{"max_len", network.max_len},
          {"attention", to_string(network.attention)},
          {"layers", summary["layers"]},
          {"d_model", summary["d_model"]},
          {"heads", summary["heads"]},
          {"parameters", summary["parameters"]},
          {"nonzeros", summary["nonzeros"]},
          {"certified", network.compiler.contains("precision")
                            ? network.compiler["precision"].value("exact_in", json(nullptr))
                            : json(nullptr)},
          {"verify",
           {{"ok", report.ok()},
            {"words", report.words},
            {"positions", report.positions},
            {"exhaustive_length", report.exhaustive_length},
            {"random_words", report.random_words}}}};
}

Model build_model(const Member& m, const std::string& strategy, const std::string& norm,
                  const SuiteRequest& r, Door door) {
  const std::string id = m.name + "." + strategy + "." + norm;
  CompileRequest request;
  request.strategy = strategy;
  request.norm = norm;
  request.max_len = r.max_len;
  PreparedCompile prepared = prepare_compile(m.automaton, m.outputs, request, door, m.source);
  CompileResult result = compile_model(id, prepared);
  Model model;
  const std::string weights_path = id + "/weights.safetensors";
  std::string weights = network_to_safetensors(result.network);
  // What the file holds, read back as krc verify, circuit and export read it.
  const Network network =
      network_from_safetensors(parse_safetensors(weights, weights_path), weights_path);
  result.network = Network{};
  const Automaton automaton = automaton_from_json(network.automaton, weights_path);
  model.files.emplace_back(weights_path, std::move(weights));

  model.files.emplace_back(id + "/circuit.json",
                           circuit_json(network, CircuitGranularity::Head).dump(1) + "\n");
  const VerifyReport report = verify_model(id, network, automaton, r, model);
  const Gpt2Fields gpt2 = add_gpt2(id, network, weights_path, r, model);

  model.row = {{"model", id},
               {"automaton", automaton.name()},
               {"source", m.source},
               {"states", automaton.state_count()},
               {"letters", automaton.letter_count()},
               {"output_kind", to_string(prepared.kind)},
               {"strategy", strategy},
               {"built", to_string(result.strategy)},
               {"norm", norm},
               {"gpt2_formats", gpt2.kept},
               {"paths",
                {{"weights", weights_path},
                 {"circuit", id + "/circuit.json"},
                 {"verify", id + "/verify.json"},
                 {"gpt2", gpt2.path}}},
               {"missing", gpt2.missing}};
  model.row.update(network_fields(network, report));
  return model;
}

}  // namespace

const std::vector<std::string>& suite_set_names() {
  static const std::vector<std::string> names{"small", "zoo", "none"};
  return names;
}

std::string suite_progress_line(const SuiteProgress& p) {
  std::string line = "suite: " + std::to_string(p.done) + " of " + std::to_string(p.total) +
                     " models (" + p.model + "), " + std::to_string(static_cast<int>(p.seconds)) +
                     " s";
  if (p.seconds_left >= 0)
    line +=
        ", about " + std::to_string(static_cast<long long>(std::ceil(p.seconds_left))) + " s left";
  return line;
}

namespace {

// Checks the request's options and the target before the work: a refusal costs nothing.
void check_suite_request(const std::string& output, const SuiteRequest& r, Door door,
                         const OutputOptions& options) {
  check_member(door, "set", r.set, suite_set_names());
  check_names(door, "strategies", r.strategies, strategy_names());
  check_names(door, "norm", r.norms, norm_names());
  check_range(door, "max_len", r.max_len, 1, kMaxLenLimit);
  check_range(door, "random", r.verify_random, 0, 1'000'000);
  check_range(door, "max_models", r.max_models, 1, kMaxSuiteModels);
  check_range(door, "max_bytes", r.max_bytes, 1, std::numeric_limits<long long>::max());
  if (r.set == "none" && r.files.empty())
    throw std::invalid_argument(option_name(door, "set") +
                                " none and no automaton files: the suite would be empty");
  if (r.files.size() > static_cast<std::size_t>(kMaxSuiteModels))
    throw LimitError("suite: " + std::to_string(r.files.size()) + " automaton files, more than " +
                     option_name(door, "max_models") + " allows at most (" +
                     std::to_string(kMaxSuiteModels) + ")");
  if (output.empty()) throw InputError(options.option, "", "the output path is empty");
  refuse_output_over_inputs(output, r.files, options.option);
  std::error_code ec;
  if (fs::exists(output, ec) && !fs::is_directory(output, ec))
    throw InputError(output, "", "exists and is not a directory; a suite is a directory");
}

// How many models the suite builds; LimitError beyond the request's max_models, before any is.
long long model_count(const std::vector<Member>& list, const SuiteRequest& r, Door door) {
  const long long total =
      static_cast<long long>(list.size() * r.strategies.size() * r.norms.size());
  if (total > r.max_models)
    throw LimitError("suite: " + std::to_string(list.size()) + " automata x " +
                     std::to_string(r.strategies.size()) + " strategies x " +
                     std::to_string(r.norms.size()) + " norms make " + std::to_string(total) +
                     " models, more than " + option_name(door, "max_models") + " " +
                     std::to_string(r.max_models));
  return total;
}

// The error when the model of `row` takes the suite's files past the request's max_bytes.
LimitError too_many_bytes(const SuiteRequest& r, Door door, const json& row) {
  return LimitError("suite: its files would hold more than " + option_name(door, "max_bytes") +
                    " " + with_thousands(r.max_bytes) + " bytes by " +
                    row["model"].get<std::string>() +
                    " (they are built in memory and written at the end); raise it, or "
                    "build fewer models or a smaller " +
                    option_name(door, "max_len"));
}

// manifest.json: what was asked, how each model was verified, and one row per model.
json suite_manifest(const SuiteRequest& r, json rows) {
  return {{"format", "krc-suite"},
          {"version", 1},
          {"krc", kVersion},
          {"set", r.set},
          {"files", r.files},
          {"strategies", r.strategies},
          {"norm", r.norms},
          {"max_len", r.max_len},
          {"verify",
           {{"exhaustive_words_at_most", kSuiteExhaustiveWords},
            {"random", r.verify_random},
            {"random_length", r.max_len},
            {"seed", kSuiteSeed},
            {"arithmetic", to_string(kDefaultArithmetic)}}},
          {"models", std::move(rows)}};
}

}  // namespace

SuiteResult build_suite(const std::string& output, const SuiteRequest& r, Door door,
                        const std::function<void(const SuiteProgress&)>& progress,
                        const OutputOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  check_suite_request(output, r, door, options);
  const std::vector<Member> list = members(r);
  const long long total = model_count(list, r, door);

  std::vector<DirectoryFile> files;
  json rows = json::array();
  long long bytes = 0, done = 0;
  for (const Member& m : list)
    for (const std::string& strategy : r.strategies)
      for (const std::string& norm : r.norms) {
        interruption_point();
        Model model = build_model(m, strategy, norm, r, door);
        for (auto& f : model.files) {
          bytes += static_cast<long long>(f.second.size());
          files.push_back(std::move(f));
        }
        if (bytes > r.max_bytes) throw too_many_bytes(r, door, model.row);
        rows.push_back(std::move(model.row));
        ++done;
        if (progress) {
          SuiteProgress p{done, total, rows.back()["model"].get<std::string>(), seconds(), -1};
          p.seconds_left =
              p.seconds / static_cast<double>(done) * static_cast<double>(total - done);
          progress(p);
        }
      }

  json manifest = suite_manifest(r, std::move(rows));
  std::string text = manifest.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  bytes += static_cast<long long>(text.size());
  files.emplace_back("manifest.json", std::move(text));
  write_output_directory(output, files, options);
  return {std::move(manifest), bytes, seconds()};
}

}  // namespace krc::front_door
