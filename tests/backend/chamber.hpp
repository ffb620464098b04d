#pragma once
// A chamber for the backend's primitives (as Tracr's craft/chamber tests do): a small program
// over the letters a, b, c (tokens 1, 2, 3) with one dummy state (or the states given),
// assembled and run by the plain dense forward pass of the test support.
#include <random>
#include <string>
#include <vector>

#include "ir/assemble.hpp"
#include "ir/schedule.hpp"
#include "naive_forward.hpp"
#include "primitives/features.hpp"

namespace krc::test {

struct Chamber {
  explicit Chamber(int max_len, std::vector<std::string> states = {"q"})
      : program({"<bos>", "a", "b", "c"}, std::move(states), max_len), features(program) {}
  Program program;
  Features features;

  // The final residual stream on `word`, under softmax or hard attention.
  Network network() const { return assemble(program, schedule(program)); }
  Eigen::MatrixXd run(const std::vector<LetterId>& word,
                      AttentionKind attention = AttentionKind::Softmax) const {
    return naive_residual(network(), word, attention);
  }
};

inline std::vector<LetterId> random_word(std::mt19937_64& rng, int length) {
  std::uniform_int_distribution<LetterId> letter(0, 2);
  std::vector<LetterId> w(length);
  for (auto& l : w) l = letter(rng);
  return w;
}

}  // namespace krc::test
