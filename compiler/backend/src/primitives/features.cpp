#include "primitives/features.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "krc/automata/integer_math.hpp"

namespace krc {

// Codes of 0..max_len, at least one bit.
int Features::code_bits() const { return std::max(1, ceil_log2(std::int64_t{max_len()} + 1)); }

const Subspace& Features::tokens() {
  auto it = allocated_.find("token");
  if (it != allocated_.end()) return it->second;
  const auto& vocab = program_.vocabulary();
  std::vector<std::string> letters(vocab.begin() + 1, vocab.end());
  Subspace s = program_.layout().allocate("token", letters, {RoleKind::Token});
  for (int i = 0; i < s.width; ++i) program_.embed_token(i + 1, s[i], 1.0f);
  return allocated_.emplace("token", s).first->second;
}

const Subspace& Features::bos() {
  auto it = allocated_.find("bos");
  if (it != allocated_.end()) return it->second;
  Subspace s = program_.layout().allocate_scalar("bos", {RoleKind::Bos});
  program_.embed_token(0, s[0], 1.0f);
  return allocated_.emplace("bos", s).first->second;
}

const Subspace& Features::one() {
  auto it = allocated_.find("one");
  if (it != allocated_.end()) return it->second;
  Subspace s = program_.layout().allocate_scalar("one", {RoleKind::Constant});
  for (int t = 0; t <= max_len(); ++t) program_.embed_position(t, s[0], 1.0f);
  return allocated_.emplace("one", s).first->second;
}

void Features::write_code(const Subspace& s, int shift) {
  for (int t = 0; t <= max_len(); ++t) {
    long target = std::max(0L, static_cast<long>(t) - shift);
    for (int b = 0; b < s.width; ++b)
      program_.embed_position(t, s[b], ((target >> b) & 1) ? 1.0f : -1.0f);
  }
}

static std::vector<std::string> bit_labels(int bits) {
  std::vector<std::string> labels;
  for (int b = 0; b < bits; ++b) labels.push_back("bit" + std::to_string(b));
  return labels;
}

const Subspace& Features::position_code() {
  auto it = allocated_.find("position code");
  if (it != allocated_.end()) return it->second;
  Subspace s = program_.layout().allocate("position code", bit_labels(code_bits()),
                                          {RoleKind::PositionCode});
  write_code(s, 0);
  return allocated_.emplace("position code", s).first->second;
}

const Subspace& Features::position_code_back(int k) {
  auto it = code_back_.find(k);
  if (it != code_back_.end()) return it->second;
  Role role{RoleKind::PositionCode};
  role.step = k;
  Subspace s = program_.layout().allocate("position code(t-" + std::to_string(k) + ")",
                                          bit_labels(code_bits()), role);
  write_code(s, k);
  return code_back_.emplace(k, s).first->second;
}

const Subspace& Features::position() {
  auto it = allocated_.find("position");
  if (it != allocated_.end()) return it->second;
  Subspace s = program_.layout().allocate_scalar("position", {RoleKind::Position});
  for (int t = 1; t <= max_len(); ++t) program_.embed_position(t, s[0], static_cast<float>(t));
  return allocated_.emplace("position", s).first->second;
}

// The angle reduced mod 2 pi first; at multiples of pi/2 the library's 6e-17 becomes the exact 0
// (every other value is at least sin(pi / 2^b) away from 0, far above the 1e-12 cut).
std::pair<double, double> Features::phase(std::int64_t t, int b) {
  const std::int64_t period = std::int64_t{2} << b;
  const double angle =
      std::numbers::pi * double(((t % period) + period) % period) / double(period / 2);
  auto snap = [](double v) { return std::abs(v) < 1e-12 ? 0.0 : v; };
  return {snap(std::cos(angle)), snap(std::sin(angle))};
}

const Subspace& Features::position_phase() {
  auto it = allocated_.find("position phase");
  if (it != allocated_.end()) return it->second;
  std::vector<std::string> labels{"cos0"};
  for (int b = 1; b < code_bits(); ++b) {
    labels.push_back("cos" + std::to_string(b));
    labels.push_back("sin" + std::to_string(b));
  }
  Subspace s = program_.layout().allocate("position phase", labels, {RoleKind::PositionCode});
  auto write = [&](int t, int dim, double value) {
    if (value != 0.0) program_.embed_position(t, dim, static_cast<float>(value));
  };
  for (int t = 0; t <= max_len(); ++t) {
    write(t, s[0], phase(t, 0).first);
    for (int b = 1; b < code_bits(); ++b) {
      const auto [c, sn] = phase(t, b);
      write(t, s[2 * b - 1], c);
      write(t, s[2 * b], sn);
    }
  }
  return allocated_.emplace("position phase", s).first->second;
}

const Subspace& Features::log_remaining() {
  auto it = allocated_.find("log remaining");
  if (it != allocated_.end()) return it->second;
  Subspace s = program_.layout().allocate_scalar("log remaining", {RoleKind::LogRemaining});
  for (int t = 0; t <= max_len(); ++t)
    program_.embed_position(t, s[0], static_cast<float>(std::log(double(max_len() + 1 - t))));
  return allocated_.emplace("log remaining", s).first->second;
}

const Subspace& Features::cached(const std::string& name, const std::function<Subspace()>& make) {
  auto it = allocated_.find(name);
  if (it != allocated_.end()) return it->second;
  return allocated_.emplace(name, make()).first->second;
}

int Features::block_bits(int block) const {
  const long blocks = (static_cast<long>(max_len()) + block - 1) / block;
  return std::max(1, ceil_log2(blocks));
}

const Subspace& Features::block_code(int block, bool previous) {
  const std::string name =
      std::string("block code") + (previous ? "(prev)" : "") + " B" + std::to_string(block);
  return cached(name, [&] {
    Role role{RoleKind::BlockCode};
    role.step = previous ? 1 : 0;
    Subspace s = program_.layout().allocate(name, bit_labels(block_bits(block)), role);
    for (int t = 1; t <= max_len(); ++t) {
      const long b = (t - 1) / block - (previous ? 1 : 0);
      if (b < 0) continue;  // no block before the first
      for (int bit = 0; bit < s.width; ++bit)
        program_.embed_position(t, s[bit], ((b >> bit) & 1) ? 1.0f : -1.0f);
    }
    return s;
  });
}

const Subspace& Features::block_start(int block) {
  const std::string name = "block start B" + std::to_string(block);
  return cached(name, [&] {
    Subspace s = program_.layout().allocate_scalar(name, {RoleKind::BlockStart});
    for (int t = 1; t <= max_len(); t += block) program_.embed_position(t, s[0], 1.0f);
    return s;
  });
}

const Subspace& Features::log_remaining_in_block(int block) {
  const std::string name = "log remaining in block B" + std::to_string(block);
  return cached(name, [&] {
    Subspace s = program_.layout().allocate_scalar(name, {RoleKind::LogRemainingInBlock});
    for (int t = 0; t <= max_len(); ++t) {
      const int k = t == 0 ? 0 : (t - 1) % block + 1;
      program_.embed_position(t, s[0], static_cast<float>(std::log(double(block + 1 - k))));
    }
    return s;
  });
}

const Subspace& Features::log_remaining_blocks(int block) {
  const std::string name = "log remaining blocks B" + std::to_string(block);
  return cached(name, [&] {
    Subspace s = program_.layout().allocate_scalar(name, {RoleKind::LogRemainingBlocks});
    const long blocks = (static_cast<long>(max_len()) + block - 1) / block;
    for (int t = 0; t <= max_len(); ++t) {
      const long started = t == 0 ? 0 : (t - 1) / block + 1;
      program_.embed_position(t, s[0], static_cast<float>(std::log(double(blocks + 1 - started))));
    }
    return s;
  });
}

}  // namespace krc
