// The weights file under hostile sizes (issue 9): the reader streams a file in order and
// checks the budget from the header before reading tensors; the writer refuses what the reader
// would refuse; loading and the forward pass stop at the memory budget.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"
#include "krc/backend/compile.hpp"
#include "krc/runtime/forward.hpp"
#include "krc/runtime/network_memory.hpp"
#include "krc/runtime/weights_file.hpp"
#include "test_support.hpp"

using namespace krc;

namespace {

class BudgetScope {
 public:
  explicit BudgetScope(std::uint64_t bytes) : previous_(memory_budget()) {
    set_memory_budget(bytes);
  }
  ~BudgetScope() { set_memory_budget(previous_); }

 private:
  std::uint64_t previous_;
};

// Parity's kr network; counters in blocks, the narrow form these budgets were sized for (the
// default past 2048; dyadic heads, where forced, are several times wider).
Network parity_network(int max_len) {
  CompileOptions options;
  options.strategy = Strategy::Kr;
  options.max_len = max_len;
  if (max_len > 2048) options.kr.counter_sum = CounterSum::Blocks;
  return compile(test::reference_automaton("parity"), options).network;
}

// Feeds `bytes` through a FIFO, so that the reader sees a stream of unknown size.
TensorFile read_through_fifo(const test::TempDir& dir, const std::string& bytes) {
  const std::string fifo = (dir / "weights.fifo").string();
  unlink(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::thread feeder([&] {
    const int fd = open(fifo.c_str(), O_WRONLY);
    std::size_t done = 0;
    while (fd >= 0 && done < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (fd >= 0) close(fd);
  });
  struct Join {
    std::thread& t;
    ~Join() { t.join(); }
  } join{feeder};
  return read_safetensors(fifo);
}

template <typename F>
std::string limit_of(F f) {
  try {
    f();
  } catch (const LimitError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("weights limits: a file or a stream reads as the bytes parse") {
  test::TempDir dir;
  const std::string bytes = network_to_safetensors(parity_network(16));
  const TensorFile parsed = parse_safetensors(bytes, "memory");
  CHECK(read_safetensors(test::write_file(dir, "p.safetensors", bytes)) == parsed);
  CHECK(read_through_fifo(dir, bytes) == parsed);
  try {
    read_through_fifo(dir, bytes + "x");
    FAIL("a trailing byte was accepted");
  } catch (const InputError& e) {
    CHECK(e.problem() == "bytes after the last tensor belong to no tensor");
  }
  try {
    read_through_fifo(dir, bytes.substr(0, bytes.size() - 3));
    FAIL("a short stream was accepted");
  } catch (const InputError& e) {
    CHECK(e.problem().find("the file ends after") == 0);
  }
}

TEST_CASE("weights limits: the budget is checked from the header, before the tensors") {
  test::TempDir dir;
  const std::string bytes = network_to_safetensors(parity_network(16));
  const std::string file = test::write_file(dir, "p.safetensors", bytes);
  std::size_t tensors_seen = 0;
  const std::string message = limit_of([&] {
    read_safetensors(file, [&](const SafetensorsHeader& header) {
      tensors_seen = header.tensors.size();
      CHECK(header.data_bytes + header.header_bytes + 8 == bytes.size());
      throw LimitError("stop here");
    });
  });
  CHECK(message == "stop here");
  CHECK(tensors_seen == parse_safetensors(bytes, "memory").tensors.size());
  // load_network's own check: a budget below the network's own size refuses the file.
  BudgetScope scope(std::uint64_t{64} << 10);
  const std::string refusal = limit_of([&] { load_network(file); });
  CHECK(refusal.find("loading " + file +
                     " (its tensors, the network and the forward pass's "
                     "copies) needs about ") == 0);
  CHECK(refusal.find("--max-memory 64.0 KiB") != std::string::npos);
}

TEST_CASE("weights limits: the writer refuses what the reader would refuse") {
  Network network = parity_network(8);
  // The reader's rule: the vocabulary is <bos> and distinct letters.
  Network twice = network;
  twice.vocabulary[2] = "<bos>";
  std::string message = limit_of([&] { network_to_safetensors(twice); });
  CHECK(message.find("krc would not read this network back (__metadata__ \"config\" at "
                     "/vocabulary/2: \"<bos>\" appears twice), so it is not written") == 0);
  // A network that loads needs more than this budget: not written either. The budget must
  // hold what writing needs beside what the process holds (the writer checks the resident
  // size: this network's 21 MiB position embedding and the test program, about 30 MiB, and a
  // 3.5 MiB tensor at a time), so the network is one that needs 53 MiB to load.
  {
    const Network large = parity_network(32768);
    BudgetScope scope(std::uint64_t{44} << 20);
    message = limit_of([&] { network_to_safetensors(large); });
    CHECK(message.find("loading this network back") != std::string::npos);
    CHECK(message.find("so it is not written") != std::string::npos);
  }
  // Within the budget, what is written reads back.
  const std::string bytes = network_to_safetensors(network);
  CHECK(network_from_safetensors(parse_safetensors(bytes, "p"), "p").vocabulary ==
        network.vocabulary);
}

TEST_CASE("weights limits: the forward pass stops at the budget, before allocating") {
  const Network network = parity_network(4096);
  ForwardPass pass(network, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 1});
  const std::vector<LetterId> word(4096, 1);
  const auto logits = pass.run(word);  // fits the default budget
  CHECK(logits.rows() == 4097);
  BudgetScope scope(std::uint64_t{4} << 20);  // prepares (about 4 MiB), but a word needs 7
  const std::string run = limit_of([&] { pass.run(word); });
  CHECK(run.find("running 1 word of up to 4,096 letters on 1 thread needs about ") == 0);
  const std::string batch = limit_of([&] {
    ForwardPass two(network, {AttentionKind::Softmax, Arithmetic::Float64Accumulate, 2});
    two.run(std::vector<std::vector<LetterId>>(3, word));
  });
  CHECK(batch.find("running 3 words of up to 4,096 letters on 2 threads") == 0);
  // Half of what preparing needs (the network's size follows its construction).
  const NetworkShape shape = shape_of(network);
  set_memory_budget((network_bytes(shape) + prepared_bytes(shape)) / 2);
  const std::string prepare = limit_of([&] { ForwardPass prepared(network); });
  CHECK(prepare.find("preparing the network for the forward pass needs about ") == 0);
}
