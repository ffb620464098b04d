#include "primitives/exact_attention.hpp"

#include <map>

#include "krc/automata/integer_math.hpp"
#include "primitives/attention_heads.hpp"

namespace krc {

// Bit k of t set: t's block is {i : i >> (k+1) == t >> (k+1), bit k of i clear}, 2^k letters
// before t. The query scores kExactBitScore * (code_b(t) code_b(i) for b > k, - code_k(i)):
// (B - k) * 64 on the block, at least 128 less elsewhere. Bit k clear (and at BOS): the head
// must add nothing, so BOS (value 0) wins by 128. BOS's key code is that of 0, anywhere
// between -64 (B - k) and 64 (B - k), so its query weight is 64 (B - k) - (128 + 64 (B - k))
// code_k(t): -128 below any block member's score when bit k is set, at least 128 above every
// other key's when it is clear. Every score is a multiple of 64 below 64 * 4B.
std::vector<HeadOp> dyadic_sum_heads(Features& f, const Terms& value,
                                     const std::vector<int>& destinations, const std::string& name,
                                     Role role) {
  const Subspace& query_code = f.position_code();      // bits of t
  const Subspace& key_code = f.position_code_back(1);  // bits of j - 1 (of 0 at BOS)
  const int bits = query_code.width;
  std::vector<HeadOp> heads;
  for (int k = 0; k < bits; ++k) {
    HeadOp head;
    head.name = name + ": block of 2^" + std::to_string(k) + " letters (bit " + std::to_string(k) +
                " of t)";
    head.role = role;
    head.role.step = k + 1;
    head.kind = HeadKind::Average;
    int q = 0;
    for (int b = k + 1; b < bits; ++b, ++q) {
      head.query.push_back({query_code[b], q, kExactBitScore});
      head.key.push_back({key_code[b], q, 1.0f});
    }
    head.query.push_back({f.one()[0], q, -kExactBitScore});  // bit k of i clear
    head.key.push_back({key_code[k], q, 1.0f});
    ++q;
    const float span = kExactBitScore * static_cast<float>(bits - k);
    head.query.push_back({f.one()[0], q, span});
    head.query.push_back({query_code[k], q, -(kExactGap + span)});
    head.key.push_back({f.bos()[0], q, 1.0f});
    head.key_dim = q + 1;
    head.value_dim = 1;
    for (auto [dim, w] : value) head.value.push_back({dim, 0, w});
    head.output.push_back({0, destinations.at(k), static_cast<float>(std::int64_t{1} << k)});
    heads.push_back(std::move(head));
  }
  return heads;
}

Terms add_dyadic_sum(Features& f, const Terms& value, const std::string& sums,
                     const std::string& heads, Role role, const std::string& group) {
  std::vector<int> parts;
  Terms sum;
  for (int k = 0; k < f.code_bits(); ++k) {
    Role part = role;
    part.step = k + 1;
    parts.push_back(f.program()
                        .layout()
                        .allocate_scalar(sums + " over the block of bit " + std::to_string(k), part)
                        .offset);
    sum.emplace_back(parts.back(), 1.0f);
  }
  for (auto& head : dyadic_sum_heads(f, value, parts, heads, role))
    f.program().add(std::move(head), group);
  return sum;
}

// 2^P > T keeps a flagged key (score >= 128 * 2^P) above every unflagged one (< 128 * (T+1)),
// and the latest flagged key 128 above the one before. The scores are 128 (2^P flag + j),
// multiples of 128 with fewer than 24 significant bits: float32 holds them exactly.
HeadOp exact_latest_flagged(Features& f, const Terms& flag, const std::vector<Entry>& copy,
                            std::string name, Role role) {
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Select;
  head.key_dim = 2;
  const int one = f.one()[0];
  const float above = static_cast<float>(std::int64_t{1} << ceil_log2(f.max_len() + 1));
  head.query.push_back({one, 0, kExactGap * above});
  for (auto [dim, w] : flag) head.key.push_back({dim, 0, w});
  head.query.push_back({one, 1, kExactGap});
  head.key.push_back({f.position()[0], 1, 1.0f});
  add_copy(head, copy);
  return head;
}

}  // namespace krc
