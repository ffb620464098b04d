// krc: compile finite semiautomata into transformer weights and verify them by running them.
#include <algorithm>
#include <iostream>

#include "command.hpp"
#include "krc/input_error.hpp"
#include "krc/version.hpp"

namespace krc::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace krc::cli

int main(int argc, char** argv) {
  using namespace krc::cli;
  CLI::App app{
      "krc compiles finite semiautomata into the weights of standard transformers (Krohn-Rhodes\n"
      "cascades or parallel-prefix networks) and verifies every emitted network by running it.\n"
      "Exit status: 0 success, 1 a verification found a mismatch, 2 bad usage or bad input."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("krc ") + krc::kVersion);

  auto& commands = command_registry();
  std::sort(commands.begin(), commands.end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  std::function<int()> run;
  for (auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    auto action = command.setup(*sub);
    sub->callback([&run, action] { run = action; });
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : 2;
  }
  try {
    return run ? run() : 0;
  } catch (const krc::InputError& e) {
    std::cerr << "krc: error: " << e.what() << "\n";
    return 2;
  } catch (const krc::LimitError& e) {
    std::cerr << "krc: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "krc: internal error: " << e.what() << "\n";
    return 3;
  }
}
