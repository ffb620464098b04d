#pragma once
// Each krc subcommand lives in its own file and registers itself here, so adding one does
// not touch main.cpp. A command's run function returns the exit status (0 ok, 1 a
// verification found a mismatch); bad input is thrown as krc::InputError (exit status 2).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace krc::cli {

struct Command {
  std::string name;
  std::string summary;
  int order;  // position in --help
  // Adds options to `sub` and returns what to run once they are parsed.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(Command command) { command_registry().push_back(std::move(command)); }
};

}  // namespace krc::cli
