#pragma once
// `krc bench compile`'s rows (bench_compile.cpp measures them) and their report
// (bench_compile_report.cpp: the table, the side-by-side table, the JSON rows).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "krc/backend/compile.hpp"

namespace krc::cli {

struct VerifyFigures {
  long long words = 0, positions = 0, wrong_positions = 0;
  double seconds = 0, cpu_seconds = 0, smallest_margin = 0;
  int threads = 0;
  bool ok() const { return wrong_positions == 0; }
  double words_per_second() const { return seconds > 0 ? words / seconds : 0; }
};

struct Row {
  std::string automaton, file;
  std::size_t states = 0, letters = 0;
  Strategy strategy = Strategy::Scan;
  int max_len = 0;
  std::string error;  // non-empty: the strategy could not build this network
  NetworkSize size;
  long long mlp_hidden_total = 0, mlp_hidden_max = 0, bytes = 0;
  std::string scan_form;  // of the parallel prefix (kr: of its scanned levels), "-" without
  double compile_seconds = 0;
  std::optional<VerifyFigures> verified;
  int onelayer_largest_len = -1;  // onelayer rows: the largest max_len it reaches (0: none)
};

nlohmann::json row_to_json(const Row& r);
// An aligned table: text columns left, numbers right; an error row gives its reason right
// after the columns that identify it.
void print_table(const std::vector<Row>& rows, bool with_verify);
// One line per automaton and max_len, a cell per strategy: "layers / parameters", or "-" over
// a limit (the first table says which), and onelayer's largest max_len.
void print_side_by_side(const std::vector<Row>& rows, const std::vector<Strategy>& strategies);

}  // namespace krc::cli
