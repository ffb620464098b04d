// What an output path names is never destroyed (issue 33): export refuses its own input (also
// through a link), a FIFO and a device node are written in place and stay what they were, a
// directory is refused as a file output, and a GPT-2 checkpoint directory appears whole: new,
// or replacing an earlier checkpoint, never over a directory holding other files or the input.
// Device nodes and FIFOs are private ones in a temporary folder, never the machine's /dev.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "child_process.hpp"
#include "krc/automata/input_error.hpp"
#include "output_file.hpp"
#include "test_support.hpp"

using namespace krc;
using test::contains;
namespace fs = std::filesystem;

namespace {

std::string zoo_file(const std::string& name) {
  return (test::source_dir() / "automata" / "zoo" / (name + ".json")).string();
}

// The names in `dir` that krc's writer uses for temporaries: none may be left behind.
std::size_t temporaries(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".krc-tmp-", 0) == 0) ++n;
  return n;
}

std::string compiled_parity(const test::TempDir& dir) {
  const std::string model = (dir / "p.safetensors").string();
  REQUIRE(test::run_child({"compile", zoo_file("parity"), "-o", model, "--max-len", "8"}).status ==
          0);
  return model;
}

}  // namespace

TEST_CASE("output: export refuses to write over its input, by any name") {
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  const std::string original = test::read_text(model);
  fs::create_symlink(model, dir / "soft.safetensors");
  fs::create_hard_link(model, dir / "hard.safetensors");
  for (const std::string& output :
       {model, (dir / "." / "p.safetensors").string(), (dir / "soft.safetensors").string(),
        (dir / "hard.safetensors").string()}) {
    CAPTURE(output);
    const auto r = test::run_child({"export", model, "-o", output});
    CHECK(r.status == 2);
    CHECK(contains(r.err, output + ": -o: is the input file"));
    CHECK(test::read_text(model) == original);
  }
  CHECK(fs::is_symlink(dir / "soft.safetensors"));
  CHECK(temporaries(dir.path()) == 0);
}

TEST_CASE("output: a FIFO and a device node are written in place, never replaced") {
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  // A private character device with /dev/null's numbers (1, 3): writes vanish, and it must
  // still be a device afterwards.
  const fs::path null_node = dir / "null";
  REQUIRE(mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", model, "-o", null_node.string()},
        {"compile", zoo_file("parity"), "-o", null_node.string()},
        {"decompose", zoo_file("parity"), "-o", null_node.string()}}) {
    CAPTURE(args[0]);
    const auto r = test::run_child(args);
    CHECK(r.status == 0);
    struct stat st {};
    REQUIRE(stat(null_node.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    CHECK(st.st_rdev == makedev(1, 3));
  }
  // A FIFO with a reader: the export's bytes go through it, and it stays a FIFO.
  const fs::path fifo = dir / "pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string received = (dir / "received").string();
  const std::string command = "cat " + fifo.string() + " > " + received + " &";
  REQUIRE(std::system(command.c_str()) == 0);
  const auto r = test::run_child({"export", model, "-o", fifo.string()});
  CHECK(r.status == 0);
  struct stat st {};
  REQUIRE(stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  const auto exported = (dir / "exported.safetensors").string();
  REQUIRE(test::run_child({"export", model, "-o", exported}).status == 0);
  for (int i = 0; i < 100 && test::read_text(received).size() < fs::file_size(exported); ++i)
    usleep(20000);
  CHECK(test::read_text(received) == test::read_text(exported));
  CHECK(temporaries(dir.path()) == 0);
}

TEST_CASE("output: a directory is refused as a file output, and a file as a checkpoint") {
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  fs::create_directory(dir / "folder");
  auto r = test::run_child({"export", model, "-o", (dir / "folder").string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "folder: is a directory; the output is a file"));
  r = test::run_child({"export", model, "--format", "gpt2", "-o", model});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "is the input file"));
  const std::string plain = test::write_file(dir, "plain.txt", "keep me\n");
  r = test::run_child({"export", model, "--format", "gpt2", "-o", plain});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "plain.txt: exists and is not a directory"));
  CHECK(test::read_text(plain) == "keep me\n");
  CHECK(temporaries(dir.path()) == 0);
}

TEST_CASE("output: a checkpoint directory appears whole, and replaces only a checkpoint") {
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  const fs::path ck = dir / "ck";
  const std::vector<std::string> files = {"config.json", "krc_circuit.json", "krc_gpt2.json",
                                          "krc_vocab.json", "model.safetensors"};
  auto listing = [](const fs::path& d) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  REQUIRE(test::run_child({"export", model, "--format", "gpt2", "-o", ck.string()}).status == 0);
  CHECK(listing(ck) == files);
  // An earlier checkpoint is replaced (here by one of another network: the bytes change).
  const std::string first = test::read_text((ck / "model.safetensors").string());
  const std::string other = (dir / "q.safetensors").string();
  REQUIRE(
      test::run_child({"compile", zoo_file("cyclic_3"), "-o", other, "--max-len", "8"}).status ==
      0);
  REQUIRE(test::run_child({"export", other, "--format", "gpt2", "-o", ck.string()}).status == 0);
  CHECK(listing(ck) == files);
  CHECK(test::read_text((ck / "model.safetensors").string()) != first);
  // An empty directory is taken; one holding anything else is refused and left as it was.
  fs::create_directory(dir / "empty");
  CHECK(test::run_child({"export", model, "--format", "gpt2", "-o", (dir / "empty").string()})
            .status == 0);
  CHECK(listing(dir / "empty") == files);
  std::ofstream(ck / "notes.md") << "mine\n";
  auto r = test::run_child({"export", model, "--format", "gpt2", "-o", ck.string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "holding \"notes.md\""));
  CHECK(test::read_text((ck / "notes.md").string()) == "mine\n");
  // A directory holding the input is refused, the input untouched.
  fs::create_directory(dir / "holds");
  fs::copy_file(model, dir / "holds" / "model.safetensors");
  const std::string inner = (dir / "holds" / "model.safetensors").string();
  const std::string original = test::read_text(inner);
  r = test::run_child({"export", inner, "--format", "gpt2", "-o", (dir / "holds").string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "holds the input file"));
  CHECK(test::read_text(inner) == original);
  CHECK(temporaries(dir.path()) == 0);
}

TEST_CASE("output: a checkpoint whose write fails part way leaves nothing behind") {
  // The file size limit makes the second file's write fail (EFBIG), as a full disk would; in a
  // child process, so that the limit ends with it.
  test::TempDir dir;
  const std::string target = (dir / "ck").string();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit limit{1000, 1000};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      front_door::write_output_directory(
          target, {{"small.json", "{}"}, {"large.bin", std::string(4000, 'x')}}, {});
    } catch (const InputError& e) {
      _exit(std::string(e.what()).find(target + ": write failed") == 0 ? 3 : 4);
    }
    _exit(5);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK_FALSE(fs::exists(target));
  CHECK(temporaries(dir.path()) == 0);
  // Without the limit the same call makes the directory, both files whole.
  front_door::write_output_directory(
      target, {{"small.json", "{}"}, {"large.bin", std::string(4000, 'x')}}, {});
  CHECK(fs::file_size(fs::path(target) / "large.bin") == 4000);
}

TEST_CASE("output: a directory output with subdirectories appears whole and replaces its own") {
  // krc suite's layout: files in subdirectories of subdirectories.
  test::TempDir dir;
  const std::string target = (dir / "suite").string();
  const std::vector<front_door::DirectoryFile> files{
      {"manifest.json", "{}"}, {"a.kr/weights.bin", "w"}, {"a.kr/gpt2/config.json", "c"}};
  front_door::write_output_directory(target, files, {});
  CHECK(test::read_text((fs::path(target) / "a.kr" / "gpt2" / "config.json").string()) == "c");
  CHECK(test::read_text((fs::path(target) / "a.kr" / "weights.bin").string()) == "w");
  // An earlier output of the same files is replaced whole.
  auto again = files;
  again[1].second = "w2";
  front_door::write_output_directory(target, again, {});
  CHECK(test::read_text((fs::path(target) / "a.kr" / "weights.bin").string()) == "w2");
  CHECK(temporaries(dir.path()) == 0);
  // A file krc does not write, deep inside, makes it refuse the directory and keep it.
  { std::ofstream((fs::path(target) / "a.kr" / "gpt2" / "mine.txt").string()) << "mine"; }
  CHECK_THROWS_WITH_AS(front_door::write_output_directory(target, files, {}),
                       doctest::Contains("a.kr/gpt2/mine.txt"), InputError);
  CHECK(test::read_text((fs::path(target) / "a.kr" / "weights.bin").string()) == "w2");
  CHECK(temporaries(dir.path()) == 0);
  // Names that would leave the directory or hide in it are a programming error.
  for (const char* bad : {"../x", "a/../x", "a//x", "a/.x", "a/"})
    CHECK_THROWS_AS(front_door::write_output_directory((dir / "other").string(), {{bad, "x"}}, {}),
                    std::logic_error);
  CHECK_FALSE(fs::exists(dir / "other"));
}
