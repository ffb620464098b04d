#pragma once
// The sections of an LTSmin ETF file (etf_reader.hpp), parsed and checked: every value index
// within its sort's values where the sort lists them, every transition row as long as the
// state vector plus the edge labels, every group's rows touching the same slots. Problems
// are InputErrors naming the file and the line.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "krc/frontend/etf_reader.hpp"

namespace krc::frontend {

struct EtfDeclaration {
  std::string name, sort;  // "" for "_"
};

struct EtfSort {
  std::vector<std::string> values;  // empty: the sort's values are the numbers themselves
  std::unordered_map<std::string, std::uint32_t> index;
};

struct EtfRow {
  std::vector<std::uint32_t> from, to;  // the group's slots' values before and after
  std::vector<std::uint32_t> labels;    // one per edge label
  std::size_t line;
};

struct EtfGroup {
  std::vector<std::uint32_t> slots;  // the slots its rows read and write ('from/to')
  std::vector<EtfRow> rows;
  std::size_t line;  // of "begin trans"
};

struct EtfModel {
  std::vector<EtfDeclaration> slots, labels;
  std::vector<std::uint32_t> initial;
  std::size_t initial_line = 0;
  std::vector<EtfGroup> groups;  // the non-empty trans sections, in order
  std::map<std::string, EtfSort> sorts;
  // The value `v` of sort `sort` as text: the sort's value where it lists them, else the number.
  std::string value_text(const std::string& sort, std::uint32_t v) const;
};

EtfModel parse_etf(const std::string& text, const std::string& file);

}  // namespace krc::frontend
