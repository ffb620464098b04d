// `krc zoo [NAME [--n N]] [-o FILE] [--json]`: lists the built-in automata, or prints one in
// krc's native JSON (the layout of the reference files: one-space indent).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/zoo.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

struct ZooOptions {
  std::string name;
  std::optional<int> n;
  std::string output = "-";
  bool json = false;
};

std::string family_listing_text() {
  struct Row {
    std::string name, parameter, default_n, description;
  };
  std::vector<Row> rows{{"family", "parameter n (range)", "default", "description"}};
  for (const auto& f : zoo_families()) {
    Row row{f.name, "-", "-", f.description};
    if (f.has_parameter) {
      row.parameter =
          f.parameter + " (" + std::to_string(f.min_n) + ".." + std::to_string(f.max_n) + ")";
      row.default_n = std::to_string(f.default_n);
    }
    rows.push_back(std::move(row));
  }
  std::size_t name_width = 0, parameter_width = 0, default_width = 0;
  for (const auto& r : rows) {
    name_width = std::max(name_width, r.name.size() + 2);
    parameter_width = std::max(parameter_width, r.parameter.size() + 2);
    default_width = std::max(default_width, r.default_n.size() + 2);
  }
  std::ostringstream out;
  out << "The zoo (krc zoo NAME [--n N] prints one in native JSON):\n\n" << std::left;
  for (const auto& r : rows)
    out << std::setw(static_cast<int>(name_width)) << r.name
        << std::setw(static_cast<int>(parameter_width)) << r.parameter
        << std::setw(static_cast<int>(default_width)) << r.default_n << r.description << "\n";
  return out.str();
}

std::string family_listing_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : zoo_families()) {
    nlohmann::json entry = {
        {"name", f.name}, {"description", f.description}, {"has_parameter", f.has_parameter}};
    if (f.has_parameter) {
      entry["parameter"] = f.parameter;
      entry["default_n"] = f.default_n;
      entry["min_n"] = f.min_n;
      entry["max_n"] = f.max_n;
    }
    list.push_back(std::move(entry));
  }
  return list.dump(1) + "\n";
}

// NAME is a family, or a family with its parameter attached as in the file names
// ("cyclic_7" means cyclic --n 7).
std::pair<std::string, std::optional<int>> family_and_parameter(const ZooOptions& o) {
  for (const auto& f : zoo_families())
    if (f.name == o.name) return {o.name, o.n};
  auto underscore = o.name.rfind('_');
  if (underscore != std::string::npos && underscore + 1 < o.name.size()) {
    std::string suffix = o.name.substr(underscore + 1);
    if (suffix.find_first_not_of("0123456789") == std::string::npos && suffix.size() <= 6) {
      int attached = std::stoi(suffix);
      if (o.n && *o.n != attached)
        throw InputError("zoo", o.name, "--n " + std::to_string(*o.n) + " contradicts the name");
      return {o.name.substr(0, underscore), attached};
    }
  }
  return {o.name, o.n};  // unknown: zoo_automaton reports it with the list of families
}

int run_zoo(const ZooOptions& o) {
  if (o.name.empty()) {
    if (o.n) throw InputError("zoo", "--n", "give a family name with --n (krc zoo NAME --n N)");
    front_door::write_output(o.output, o.json ? family_listing_json() : family_listing_text());
    return 0;
  }
  auto [family, n] = family_and_parameter(o);
  front_door::write_output(o.output, automaton_to_json_text(zoo_automaton(family, n)));
  return 0;
}

const RegisterCommand zoo_registration{Command{
    "zoo", "List the built-in automata, or print one as native JSON", 60,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<ZooOptions>();
      sub.footer(
          "krc zoo alone lists the families; krc zoo NAME [--n N] [-o FILE] prints one in krc's\n"
          "native JSON (the layout of tests/reference/automata). Families with a size take --n\n"
          "(each has a default and a range; see the list); NAME_N works too.\n\n"
          "Examples:\n"
          "  krc zoo                               # the families, their parameter and default\n"
          "  krc zoo gridworld --n 9 -o grid.json  # the clamped walk on 9 cells\n"
          "  krc zoo cyclic_7                      # the same as krc zoo cyclic --n 7");
      sub.add_option("name", o->name, "Family to print (omit to list the families)");
      sub.add_option("--n", o->n, "The family's size parameter (see the list for the range)");
      sub.add_option("-o,--output", o->output,
                     "Write to FILE (atomically) instead of standard output")
          ->option_text("FILE")
          ->check(nonempty_path());
      sub.add_flag("--json", o->json,
                   "List the families as JSON (name, description, parameter, range)");
      return [o] { return run_zoo(*o); };
    }}};

}  // namespace
}  // namespace krc::cli
