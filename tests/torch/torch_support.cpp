#include "torch_support.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "krc/automata/automaton_json.hpp"

namespace krc::test {

namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string python() {
  const char* env = std::getenv("KRC_VENV");
  const fs::path venv = (env != nullptr && *env != '\0') ? fs::path(env) : source_dir() / ".venv";
  return (venv / "bin" / "python").string();
}

bool torch_available() {
  static const bool available =
      std::system(
          (quote(python()) + " -c 'import torch, numpy, safetensors' >/dev/null 2>&1").c_str()) ==
      0;
  return available;
}

CommandResult run_python(const TempDir& dir, const std::vector<std::string>& args,
                         const std::string& input) {
  const std::string in = write_file(dir, "python_stdin.txt", input);
  // One OpenMP thread unless the caller says otherwise: the test networks are small, and on a
  // shared machine torch's spinning threads cost ten times the work.
  std::string command = "OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} " + quote(python());
  for (const auto& a : args) command += " " + quote(a);
  const std::string out = (dir / "python_stdout.txt").string();
  const std::string err = (dir / "python_stderr.txt").string();
  command += " <" + quote(in) + " >" + quote(out) + " 2>" + quote(err);
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), read_text(out), read_text(err)};
}

CommandResult run_python_code(const TempDir& dir, const std::string& code,
                              const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> all{write_file(dir, "program.py", code)};
  all.insert(all.end(), args.begin(), args.end());
  return run_python(dir, all, input);
}

std::vector<nlohmann::json> run_krc_torch(const TempDir& dir, const std::string& model,
                                          const std::vector<std::vector<std::string>>& words,
                                          const std::vector<std::string>& options) {
  std::string input;
  for (const auto& w : words) {
    for (std::size_t i = 0; i < w.size(); ++i) input += (i ? " " : "") + w[i];
    input += "\n";
  }
  std::vector<std::string> args{(source_dir() / "tools" / "krc_torch.py").string(), model};
  args.insert(args.end(), options.begin(), options.end());
  const CommandResult result = run_python(dir, args, input);
  REQUIRE_MESSAGE(result.status == 0, result.err);
  std::vector<nlohmann::json> lines;
  std::istringstream out(result.out);
  for (std::string line; std::getline(out, line);) lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == words.size());
  return lines;
}

std::string compile_zoo(const TempDir& dir, const std::string& name, const std::string& file,
                        const std::vector<std::string>& options) {
  const std::string model = (dir / file).string();
  std::vector<std::string> args{
      "compile", (source_dir() / "automata" / "zoo" / (name + ".json")).string(), "-o", model};
  args.insert(args.end(), options.begin(), options.end());
  const CommandResult compiled = run_krc(args);
  REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
  return model;
}

nlohmann::json krc_run(const std::string& model, const std::vector<std::string>& word,
                       const std::vector<std::string>& options) {
  std::vector<std::string> args{"run", model, "--json"};
  args.insert(args.end(), options.begin(), options.end());
  // Letters as one comma-separated argument: an empty word is an empty string.
  std::string letters;
  for (std::size_t i = 0; i < word.size(); ++i) letters += (i ? "," : "") + word[i];
  args.push_back(letters);
  const CommandResult run = run_krc(args);
  REQUIRE_MESSAGE(run.status == 0, run.err);
  return nlohmann::json::parse(run.out);
}

Words random_words(const Automaton& automaton, std::mt19937_64& rng, int count, int min_length,
                   int max_length) {
  Words words;
  for (int w = 0; w < count; ++w) {
    std::vector<LetterId> word(std::uniform_int_distribution<int>(min_length, max_length)(rng));
    for (auto& a : word) a = static_cast<LetterId>(rng() % automaton.letter_count());
    std::vector<std::string> letters;
    for (LetterId a : word) letters.push_back(automaton.letter_name(a));
    nlohmann::json states = nlohmann::json::array();
    for (StateId s : automaton.run(word)) states.push_back(automaton.state_name(s));
    words.letters.push_back(std::move(letters));
    words.states.push_back(std::move(states));
  }
  return words;
}

}  // namespace krc::test
