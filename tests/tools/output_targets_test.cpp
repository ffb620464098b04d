// What an output path names is never destroyed (issue 33): export refuses its own input (also
// through a link), a FIFO and a device node are written in place and stay what they were, a
// directory is refused as a file output, and a GPT-2 checkpoint directory appears whole: new,
// or replacing an earlier checkpoint, never over a directory holding other files or the input.
// Device nodes and FIFOs are private ones in a temporary folder, never the machine's /dev.
#include <doctest/doctest.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

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

// The cases as an ordinary user need root to become one; elsewhere ctest reports them skipped.
bool skipped_unless_root() {
  if (test::can_drop_privileges()) return false;
  std::cout << "krc-test-skipped: becoming an ordinary user (uid " << test::kNobody
            << ") needs root\n";
  return true;
}

// krc as the ordinary user: the copy of the binary share_with_nobody put in `dir`.
test::ChildResult run_as_nobody(const test::TempDir& dir, std::vector<std::string> args) {
  test::ChildSpec spec(std::move(args));
  spec.user = test::kNobody;
  spec.program = (dir / "krc").string();
  return test::run_child(spec);
}

// Opens `dir` to the ordinary user: readable, with "open" theirs to write and "locked" root's,
// which they may only read (so permissions, which root ignores, decide). The user may not
// reach the build tree or the sources (a checkout in a 0700 folder, as mktemp -d makes), so
// krc and parity's description are copied in.
void share_with_nobody(const test::TempDir& dir) {
  fs::permissions(dir.path(), fs::perms(0755));
  fs::copy_file(test::krc_binary(), dir / "krc");
  fs::permissions(dir / "krc", fs::perms(0755));
  fs::copy_file(zoo_file("parity"), dir / "parity.json");
  fs::permissions(dir / "parity.json", fs::perms(0644));
  fs::create_directory(dir / "open");
  REQUIRE(chown((dir / "open").c_str(), test::kNobody, test::kNobody) == 0);
  fs::create_directory(dir / "locked");
  fs::permissions(dir / "locked", fs::perms(0755));
}

std::string text_of(const fs::path& p) { return test::read_text(p.string()); }

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
  // A private full disk (/dev/full's numbers, 1, 7): the write fails, exit 2, still a device.
  const fs::path full_node = dir / "full";
  REQUIRE(mknod(full_node.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0);
  const auto full = test::run_child({"export", model, "-o", full_node.string()});
  CHECK(full.status == 2);
  CHECK(contains(full.err, full_node.string() + ": write failed: No space left on device"));
  CHECK(fs::is_character_file(full_node));
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
  // As root and as an ordinary user, in a folder that user may write.
  test::TempDir dir;
  const bool as_nobody = test::can_drop_privileges();
  if (as_nobody) share_with_nobody(dir);
  const std::string target = (dir / (as_nobody ? "open/ck" : "ck")).string();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit limit{1000, 1000};
    setrlimit(RLIMIT_FSIZE, &limit);
    if (as_nobody &&
        (setgroups(0, nullptr) != 0 || setgid(test::kNobody) != 0 || setuid(test::kNobody) != 0))
      _exit(6);
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
  CHECK(temporaries(fs::path(target).parent_path()) == 0);
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

TEST_CASE("output: as an ordinary user, what it may not write is refused and left as it was") {
  if (skipped_unless_root()) return;
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  share_with_nobody(dir);
  // A new file in a directory it may not write, by each command that writes one.
  const std::string denied = (dir / "locked" / "x").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", model, "-o", denied},
        {"compile", (dir / "parity.json").string(), "-o", denied},
        {"decompose", (dir / "parity.json").string(), "-o", denied}}) {
    CAPTURE(args[0]);
    const auto r = run_as_nobody(dir, args);
    CHECK(r.status == 2);
    CHECK(contains(r.err, denied + ": cannot write here: Permission denied"));
  }
  // A file it may write, in a directory it may not: no temporary can be made beside it.
  const fs::path mine = test::write_file(dir, "locked/mine", "keep me\n");
  fs::permissions(mine, fs::perms(0666));
  auto r = run_as_nobody(dir, {"export", model, "-o", mine.string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, mine.string() + ": cannot write here: Permission denied"));
  // A read-only file in a directory it may write: refused, not renamed over.
  const fs::path read_only = test::write_file(dir, "open/ro.safetensors", "keep me\n");
  REQUIRE(chown(read_only.c_str(), test::kNobody, test::kNobody) == 0);
  fs::permissions(read_only, fs::perms(0444));
  r = run_as_nobody(dir, {"export", model, "-o", read_only.string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, read_only.string() + ": cannot write the file: Permission denied"));
  CHECK(text_of(read_only) == "keep me\n");
  // A link in its own directory to the file in the locked one: refused, naming the link.
  fs::create_symlink(mine, dir / "open" / "link");
  r = run_as_nobody(dir, {"export", model, "-o", (dir / "open" / "link").string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, (dir / "open" / "link").string() + ": cannot write here"));
  CHECK(fs::is_symlink(dir / "open" / "link"));
  // Its input, as for root.
  r = run_as_nobody(dir, {"export", model, "-o", model});
  CHECK(r.status == 2);
  CHECK(contains(r.err, model + ": -o: is the input file"));
  CHECK(text_of(mine) == "keep me\n");
  CHECK(std::distance(fs::directory_iterator(dir / "locked"), fs::directory_iterator()) == 1);
  // Where it may write, it writes (the user can read the input and run krc).
  CHECK(run_as_nobody(dir, {"export", model, "-o", (dir / "open" / "new.safetensors").string()})
            .status == 0);
  CHECK(fs::file_size(dir / "open" / "new.safetensors") > 0);
  CHECK(temporaries(dir / "open") == 0);
}

TEST_CASE("output: as an ordinary user, a checkpoint it may not write leaves no directory") {
  if (skipped_unless_root()) return;
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  share_with_nobody(dir);
  // A new checkpoint in a directory it may not write.
  const std::string denied = (dir / "locked" / "ck").string();
  auto r = run_as_nobody(dir, {"export", model, "--format", "gpt2", "-o", denied});
  CHECK(r.status == 2);
  CHECK(contains(r.err, denied + ": cannot create the directory: Permission denied"));
  CHECK(fs::is_empty(dir / "locked"));
  // An earlier checkpoint of root's in its own directory: refused, not exchanged for a new one
  // (which would leave the old one, undeletable, beside it).
  const fs::path ck = dir / "open" / "ck";
  REQUIRE(test::run_child({"export", model, "--format", "gpt2", "-o", ck.string()}).status == 0);
  const std::string config = text_of(ck / "config.json");
  r = run_as_nobody(dir, {"export", model, "--format", "gpt2", "-o", ck.string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, ck.string() + ": cannot replace the directory: Permission denied"));
  CHECK(text_of(ck / "config.json") == config);
  CHECK(temporaries(dir / "open") == 0);
  // Its own earlier checkpoint is replaced.
  const fs::path own = dir / "open" / "own";
  REQUIRE(run_as_nobody(dir, {"export", model, "--format", "gpt2", "-o", own.string()}).status ==
          0);
  CHECK(run_as_nobody(dir, {"export", model, "--format", "gpt2", "-o", own.string()}).status == 0);
  CHECK(fs::exists(own / "config.json"));
  CHECK(temporaries(dir / "open") == 0);
}

TEST_CASE("output: as an ordinary user, a device or FIFO is written in place or refused") {
  if (skipped_unless_root()) return;
  test::TempDir dir;
  const std::string model = compiled_parity(dir);
  share_with_nobody(dir);
  struct Node {
    const char* name;
    mode_t mode;
    unsigned minor;  // of a character device of major 1: 3 /dev/null, 7 /dev/full
    int status;
    const char* error;
  };
  for (const Node& n : {Node{"null", 0666, 3, 0, ""},
                        Node{"full", 0666, 7, 2, ": write failed: No space left on device"},
                        Node{"root-null", 0600, 3, 2, ": cannot write here: Permission denied"}}) {
    CAPTURE(n.name);
    const fs::path node = dir / "open" / n.name;
    REQUIRE(mknod(node.c_str(), S_IFCHR | n.mode, makedev(1, n.minor)) == 0);
    REQUIRE(chmod(node.c_str(), n.mode) == 0);  // past the umask
    const auto r = run_as_nobody(dir, {"export", model, "-o", node.string()});
    CHECK(r.status == n.status);
    CHECK(contains(r.err, n.status ? node.string() + n.error : ""));
    struct stat st {};
    REQUIRE(stat(node.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    CHECK(st.st_rdev == makedev(1, n.minor));
  }
  // Root's FIFO: refused at once (no reader needed), still a FIFO.
  const fs::path fifo = dir / "open" / "pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const auto r = run_as_nobody(dir, {"export", model, "-o", fifo.string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, fifo.string() + ": cannot write here: Permission denied"));
  CHECK(fs::is_fifo(fifo));
  CHECK(temporaries(dir / "open") == 0);
}
