#include "test_support.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "krc/automata/automaton_json.hpp"

namespace krc::test {

namespace fs = std::filesystem;

fs::path source_dir() { return fs::path(KRC_SOURCE_DIR); }

std::string krc_binary() {
  const char* env = std::getenv("KRC_BINARY");
  return env ? env : (fs::path(KRC_BINARY_DIR) / "krc").string();
}
bool accepts(const Automaton& a, const std::vector<std::string>& word) {
  std::vector<LetterId> ids;
  for (const auto& w : word) {
    const long l = a.find_letter(w);
    if (l < 0) throw std::invalid_argument("no letter '" + w + "' in " + a.name());
    ids.push_back(static_cast<LetterId>(l));
  }
  const StateId end = a.run(ids).back();
  return std::find(a.accepting().begin(), a.accepting().end(), end) != a.accepting().end();
}

fs::path reference_dir() { return source_dir() / "tests" / "reference"; }

std::vector<std::string> reference_automaton_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(reference_dir() / "automata"))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Automaton reference_automaton(const std::string& name) {
  return automaton_from_json(
      nlohmann::json::parse(read_text(reference_dir() / "automata" / (name + ".json"))), name);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string with_commas(long long n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "krc-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

namespace {
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

std::vector<nlohmann::json> run_reference_forward(const TempDir& dir, const std::string& model,
                                                  const std::vector<std::string>& word_lines,
                                                  const std::vector<std::string>& args) {
  std::string words;
  for (const auto& line : word_lines) words += line + "\n";
  const std::string input = write_file(dir, "reference_forward_input.txt", words);
  const std::string output = (dir / "reference_forward_output.jsonl").string();
  std::string command = "/usr/bin/python3 " +
                        shell_quote((source_dir() / "tools" / "reference_forward.py").string()) +
                        " " + shell_quote(model);
  for (const auto& a : args) command += " " + shell_quote(a);
  command += " < " + shell_quote(input) + " > " + shell_quote(output);
  const int status = std::system(command.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("reference_forward.py failed: " + command);
  std::vector<nlohmann::json> lines;
  std::istringstream out(read_text(output));
  for (std::string line; std::getline(out, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::vector<std::string> word_lines(const std::vector<std::string>& vocabulary,
                                    const std::vector<std::vector<LetterId>>& words) {
  std::vector<std::string> lines;
  for (const auto& w : words) {
    std::string line;
    for (std::size_t i = 0; i < w.size(); ++i) line += (i ? "," : "") + vocabulary[w[i] + 1];
    lines.push_back(line);
  }
  return lines;
}

CommandResult run_krc(const std::vector<std::string>& args) {
  TempDir dir;
  std::string command = shell_quote(krc_binary());
  for (const auto& a : args) command += " " + shell_quote(a);
  command +=
      " >" + shell_quote((dir / "out").string()) + " 2>" + shell_quote((dir / "err").string());
  int raw = std::system(command.c_str());
  CommandResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  result.out = read_text(dir / "out");
  result.err = read_text(dir / "err");
  return result;
}

Automaton random_automaton_of_size(std::mt19937_64& rng, int n, int letters) {
  std::vector<std::string> states, names;
  for (int q = 0; q < n; ++q) states.push_back("q" + std::to_string(q));
  for (int a = 0; a < letters; ++a) names.push_back(std::string(1, char('a' + a)));
  std::vector<std::vector<StateId>> delta(letters, std::vector<StateId>(n));
  for (auto& row : delta)
    for (auto& v : row) v = static_cast<StateId>(rng() % n);
  return Automaton("random_" + std::to_string(n), states, names, delta, 0);
}

Automaton random_automaton(std::mt19937_64& rng, int max_states, int max_letters) {
  int n = std::uniform_int_distribution<int>(1, max_states)(rng);
  int k = std::uniform_int_distribution<int>(1, max_letters)(rng);
  std::vector<std::string> states, letters;
  for (int i = 0; i < n; ++i) states.push_back("q" + std::to_string(i));
  for (int i = 0; i < k; ++i) letters.push_back(std::string(1, static_cast<char>('a' + i)));
  std::vector<std::vector<StateId>> delta(k, std::vector<StateId>(n));
  std::uniform_int_distribution<StateId> target(0, static_cast<StateId>(n - 1));
  for (auto& row : delta)
    for (auto& t : row) t = target(rng);
  return Automaton("random_" + std::to_string(n) + "x" + std::to_string(k), states, letters, delta,
                   target(rng));
}

}  // namespace krc::test

namespace krc::test {

double test_scale() {
  static const double scale = [] {
    const char* text = std::getenv("KRC_TEST_SCALE");
    if (!text || !*text) return 1.0;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (*end != '\0' || !(value > 0.0) || value > 1.0)
      throw std::runtime_error(std::string("KRC_TEST_SCALE must be a number in (0, 1], not '") +
                               text + "'");
    return value;
  }();
  return scale;
}

long long scaled(long long n) {
  return std::max(1LL, static_cast<long long>(std::ceil(static_cast<double>(n) * test_scale())));
}

double heavy_scale() {
  static const double scale = [] {
    const char* text = std::getenv("KRC_HEAVY_SCALE");
    if (!text || !*text) return 0.04;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (*end != '\0' || !(value > 0.0) || value > 1.0)
      throw std::runtime_error(std::string("KRC_HEAVY_SCALE must be a number in (0, 1], not '") +
                               text + "'");
    return value;
  }();
  return scale;
}

long long heavy_scaled(long long n) {
  return std::max(1LL, std::llround(static_cast<double>(n) * heavy_scale()));
}

std::vector<std::string> heavy_sample(const std::vector<std::string>& names) {
  const auto stride = std::max(1LL, std::llround(1.0 / heavy_scale()));
  std::vector<std::string> sample;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (static_cast<long long>(i) % stride == 0 || names[i] == "symmetric_4")
      sample.push_back(names[i]);
  return sample;
}

}  // namespace krc::test
