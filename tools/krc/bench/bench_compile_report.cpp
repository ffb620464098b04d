// The report of `krc bench compile`: its rows as an aligned table (and, with --strategy all,
// side by side), or as JSON.
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_compile.hpp"
#include "krc/automata/thousands.hpp"
#include "text_table.hpp"

namespace krc::cli {

namespace {

std::string fixed(double x, int decimals) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(decimals);
  s << x;
  return s.str();
}

std::string margin_text(double margin) {
  if (std::isinf(margin)) return margin > 0 ? "inf" : "-inf";
  std::ostringstream s;
  s.precision(4);
  s << margin;
  return s.str();
}

}  // namespace

nlohmann::json row_to_json(const Row& r) {
  nlohmann::json j = {{"automaton", r.automaton},
                      {"file", r.file},
                      {"states", r.states},
                      {"letters", r.letters},
                      {"strategy", to_string(r.strategy)},
                      {"max_len", r.max_len}};
  if (r.onelayer_largest_len >= 0) j["largest_len"] = r.onelayer_largest_len;
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  j["layers"] = r.size.layers;
  j["d_model"] = r.size.d_model;
  j["heads"] = r.size.heads;
  j["mlp_hidden"] = r.mlp_hidden_total;
  j["mlp_hidden_max"] = r.mlp_hidden_max;
  j["scan_form"] = r.scan_form;
  j["parameters"] = r.size.parameters;
  j["nonzeros"] = r.size.nonzeros;
  j["bytes"] = r.bytes;
  j["compile_seconds"] = r.compile_seconds;
  if (r.verified) {
    const auto& v = *r.verified;
    j["verify"] = {
        {"words", v.words},
        {"length", r.max_len},
        {"positions", v.positions},
        {"wrong_positions", v.wrong_positions},
        {"ok", v.ok()},
        {"seconds", v.seconds},
        {"cpu_seconds", v.cpu_seconds},
        {"words_per_second", v.words_per_second()},
        // +inf (one state: no wrong logit) has no JSON form: null.
        {"smallest_margin", std::isfinite(v.smallest_margin) ? nlohmann::json(v.smallest_margin)
                                                             : nlohmann::json(nullptr)},
        {"threads", v.threads}};
  }
  return j;
}

void print_table(const std::vector<Row>& rows, bool with_verify) {
  std::vector<std::string> header{
      "automaton",  "strategy",  "max_len",    "states",   "layers",     "d_model",   "heads",
      "MLP hidden", "per layer", "parameters", "nonzeros", "file bytes", "compile s", "scan form"};
  if (with_verify)
    for (const char* h : {"verify s", "cpu s", "words/s", "min margin", "result"})
      header.push_back(h);
  std::vector<std::vector<std::string>> cells{header};
  for (const auto& r : rows) {
    std::vector<std::string> c{r.automaton, to_string(r.strategy), with_thousands(r.max_len)};
    if (r.error.empty()) {
      for (long long n :
           {static_cast<long long>(r.states), static_cast<long long>(r.size.layers),
            static_cast<long long>(r.size.d_model), static_cast<long long>(r.size.heads),
            r.mlp_hidden_total, r.mlp_hidden_max, r.size.parameters, r.size.nonzeros, r.bytes})
        c.push_back(with_thousands(n));
      c.push_back(fixed(r.compile_seconds, r.compile_seconds < 0.1 ? 4 : 3));
      c.push_back(r.scan_form);
      if (r.verified) {
        const auto& v = *r.verified;
        c.push_back(fixed(v.seconds, 2));
        c.push_back(fixed(v.cpu_seconds, 2));
        const double rate = v.words_per_second();
        c.push_back(rate >= 100 ? with_thousands(std::llround(rate)) : fixed(rate, 1));
        c.push_back(margin_text(v.smallest_margin));
        c.push_back(v.ok() ? "all right" : with_thousands(v.wrong_positions) + " wrong positions");
      }
    }
    cells.push_back(std::move(c));
  }
  const auto lines = aligned(cells, [&](std::size_t c) {
    return c < 2 || header[c] == "scan form" || header[c] == "result";
  });
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::cout << lines[i];
    if (i > 0 && !rows[i - 1].error.empty()) std::cout << "  error: " << rows[i - 1].error;
    std::cout << "\n";
  }
  std::cout << "\nMLP hidden: units in all layers, per layer: in the widest; compile s: wall time "
               "of krc::compile alone (not loading, not writing the file); file bytes: the "
               "safetensors file krc compile writes (sparse storage)\n";
  if (with_verify)
    std::cout << "verify s: wall time of krc::verify in float32 (attention as compiled) on the "
                 "random words of"
                 " length max_len, no exhaustive part; cpu s: its CPU time over all threads;\n"
                 "words/s: words per wall second; min margin: right logit - best wrong logit\n";
}

void print_side_by_side(const std::vector<Row>& rows, const std::vector<Strategy>& strategies) {
  std::vector<std::vector<std::string>> cells{{"automaton", "max_len"}};
  for (Strategy s : strategies) cells[0].push_back(std::string(to_string(s)) + " layers/params");
  cells[0].push_back("onelayer largest max_len");
  for (std::size_t i = 0; i + strategies.size() <= rows.size(); i += strategies.size()) {
    std::vector<std::string> line{rows[i].automaton, with_thousands(rows[i].max_len)};
    std::string largest = "-";
    for (std::size_t k = 0; k < strategies.size(); ++k) {
      const Row& r = rows[i + k];
      line.push_back(r.error.empty()
                         ? std::to_string(r.size.layers) + " / " + with_thousands(r.size.parameters)
                         : "-");
      if (r.onelayer_largest_len >= 0) largest = with_thousands(r.onelayer_largest_len);
    }
    line.push_back(largest);
    cells.push_back(std::move(line));
  }
  std::cout
      << "\nside by side (layers / parameters; -: over a limit, the table above says which):\n";
  for (const auto& line : aligned(cells, [](std::size_t c) { return c == 0; }))
    std::cout << line << "\n";
}

}  // namespace krc::cli
