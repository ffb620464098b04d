// krc: compile finite semiautomata into transformer weights and verify them by running them.
#include <algorithm>
#include <iostream>
#include <new>

#include "command.hpp"
#include "krc/automata/failed_phase.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/automata/version.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace krc::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace krc::cli

namespace {

// Runs the chosen command; every failure becomes a message and an exit status.
int run_command(const std::function<int()>& run) {
  try {
    return run ? run() : 0;
  } catch (const krc::InputError& e) {
    std::cerr << "krc: error: " << e.what() << "\n";
  } catch (const krc::LimitError& e) {
    std::cerr << "krc: error: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    // An allocation the estimates missed: still no crash, the phase, and the way out.
    const std::string phase = krc::failed_phase();
    std::cerr << "krc: error: " << (phase.empty() ? "" : phase + ": ")
              << "out of memory (the memory budget is --max-memory "
              << krc::byte_size_text(krc::memory_budget()) << "; lower it to stop earlier)\n";
  } catch (const std::exception& e) {
    std::cerr << "krc: internal error: " << e.what() << "\n";
    return 3;
  }
  return 2;
}

// Output to standard output that did not arrive is an error too.
int finish(int status) {
  try {
    krc::front_door::finish_standard_output();
  } catch (const krc::InputError& e) {
    std::cerr << "krc: error: " << e.what() << "\n";
    return status == 3 ? 3 : 2;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace krc::cli;
  krc::front_door::guard_standard_streams();
  krc::front_door::exit_on_interrupt();
  CLI::App app{
      "krc compiles finite semiautomata into the weights of standard transformers (Krohn-Rhodes\n"
      "cascades or parallel-prefix networks) and verifies every emitted network by running it.\n"
      "Exit status: 0 success, 1 a verification found a mismatch, 2 bad usage, bad input, a\n"
      "limit (such as the memory budget) or output that could not be written."};
  app.require_subcommand(1);
  // A usage error reads as every other refusal of krc ("krc: error: ..."), with CLI11's pointer
  // to the help after it. Set before the subcommands are added: each copies it.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    return "krc: error: " + CLI::FailureMessage::simple(failed, e);
  });
  app.set_version_flag("--version", std::string("krc ") + krc::kVersion);
  std::string max_memory;
  app.add_option("--max-memory", max_memory,
                 "Memory budget: every stage estimates its memory before allocating and stops "
                 "over it (default: half of this machine's memory, " +
                     krc::byte_size_text(krc::default_memory_budget()) +
                     "). Sizes like 512M, 4G, 1.5GiB")
      ->check(byte_size())
      ->envname("KRC_MAX_MEMORY");
  app.fallthrough();  // --max-memory may follow the subcommand

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
    return finish(status == 0 ? 0 : 2);
  }
  if (!max_memory.empty()) krc::set_memory_budget(*krc::parse_byte_size(max_memory));
  return finish(run_command(run));
}
