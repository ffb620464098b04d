// Output is never lost silently and never half-written (issue 9): failed writes to files and
// to standard output exit 2, an interrupted write leaves no temporary file, -o may not name the
// input, and options out of range say so in plain numbers.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>

#include "child_process.hpp"
#include "test_support.hpp"

using namespace krc;
using test::contains;
namespace fs = std::filesystem;

namespace {

std::string zoo_file(const std::string& name) {
  return (test::source_dir() / "automata" / "zoo" / (name + ".json")).string();
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("output: a full disk or a closed standard output is an error, exit 2") {
  test::TempDir dir;
  auto r = test::run_child({"zoo", "parity", "-o", "/dev/full"});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "krc: error: /dev/full: write failed: No space left on device"));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"zoo", "parity"},
                                               {"zoo"},
                                               {"decompose", zoo_file("parity")},
                                               {"compile", zoo_file("parity"), "-o", "-"},
                                               {"info", zoo_file("parity")}}) {
    CAPTURE(args[0]);
    test::ChildSpec full(args);
    full.stdout_path = "/dev/full";
    r = test::run_child(full);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "krc: error: <stdout>: write failed: No space left on device"));
    test::ChildSpec closed(args);
    closed.close_stdout = true;
    r = test::run_child(closed);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "krc: error: <stdout>: write failed: Bad file descriptor"));
  }
  // With standard output closed, the weights still go whole to their file (no descriptor mix-up),
  // and the lost summary is reported.
  test::ChildSpec closed({"compile", zoo_file("parity"), "-o", (dir / "p.safetensors").string()});
  closed.close_stdout = true;
  r = test::run_child(closed);
  CHECK(r.status == 2);
  CHECK(test::run_child({"verify", (dir / "p.safetensors").string()}).status == 0);
}

TEST_CASE("output: SIGINT, SIGTERM or SIGHUP during a write leave no temporary file") {
  test::TempDir dir;
  const std::string out = (dir / "net.safetensors").string();
  const std::string previous = "an earlier output, not to be touched\n";
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(signal);
    test::write_file(dir, "net.safetensors", previous);
    bool caught = false;
    // A dense network of tens of MB: the signal is sent when its temporary file appears
    // (inotify), the writer stopped first to prove it is mid-write. Larger outputs if it ever
    // finishes first.
    for (const char* max_len : {"262144", "524288", "1048576"}) {
      const int watch = inotify_init1(IN_CLOEXEC);
      REQUIRE(watch >= 0);
      REQUIRE(inotify_add_watch(watch, dir.path().c_str(), IN_CREATE) >= 0);
      test::Child child(test::ChildSpec({"compile", zoo_file("parity"), "-o", out, "--strategy",
                                         "kr", "--dense", "--max-len", max_len}));
      char buffer[4096];
      REQUIRE(read(watch, buffer, sizeof buffer) > 0);  // the temporary file was created
      kill(child.pid(), SIGSTOP);
      std::string temporary;
      for (const auto& entry : fs::directory_iterator(dir.path()))
        if (entry.path().filename().string().rfind(".krc-tmp-", 0) == 0) temporary = entry.path();
      kill(child.pid(), signal);
      kill(child.pid(), SIGCONT);
      const auto r = child.finish();
      close(watch);
      if (temporary.empty()) continue;  // already renamed: try a larger output
      caught = true;
      CHECK(r.status == 128 + signal);
      CHECK_FALSE(fs::exists(temporary));
      CHECK(test::read_text(out) == previous);
      CHECK(entries(dir.path()) == 1);
      break;
    }
    CHECK(caught);
  }
}

TEST_CASE("output: -o may not name the input, nor be empty") {
  test::TempDir dir;
  const std::string input =
      test::write_file(dir, "parity.json", test::read_text(zoo_file("parity")));
  const std::string original = test::read_text(input);
  fs::create_hard_link(input, dir / "link.json");
  for (const std::string& output : {input, (dir / "link.json").string()}) {
    for (const char* command : {"compile", "decompose"}) {
      const auto r = test::run_child({command, input, "-o", output});
      CAPTURE(r.err);
      CHECK(r.status == 2);
      CHECK(contains(r.err, "krc: error: " + output + ": -o: is the input file"));
      CHECK(test::read_text(input) == original);
    }
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"compile", input, "-o", ""},
                                               {"decompose", input, "-o", ""},
                                               {"zoo", "parity", "-o", ""}}) {
    const auto r = test::run_child(args);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--output: the path is empty"));
  }
  CHECK(entries(dir.path()) == 2);
}

TEST_CASE("options: ranges in plain numbers, no silent saturation") {
  test::TempDir dir;
  const std::string model = (dir / "p.safetensors").string();
  REQUIRE(test::run_child({"compile", zoo_file("parity"), "-o", model, "--max-len", "8"}).status ==
          0);
  auto r = test::run_child({"verify", model, "--threads", "-1"});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "--threads: -1 is not an integer in [0, 1,024]"));
  CHECK(r.err.size() < 200);
  r = test::run_child({"verify", model, "--seed", "18446744073709551616"});
  CHECK(r.status == 2);
  CHECK(contains(r.err,
                 "18446744073709551616 is not an integer in [0, "
                 "18,446,744,073,709,551,615] (2^64 - 1)"));
  r = test::run_child({"verify", model, "--seed", "18446744073709551615", "--random", "2",
                       "--exhaustive", "0", "--json"});
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(r.out)["random"]["seed"].get<std::uint64_t>() ==
        18446744073709551615ULL);
  for (const char* bad : {"12X", "-5", "0", ""}) {
    r = test::run_child({"verify", model, "--max-memory", bad});
    CHECK(r.status == 2);
    CHECK(contains(r.err, "is not a size"));
  }
}
