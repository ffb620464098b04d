#include "primitives/attention_heads.hpp"

#include <map>

#include "primitives/exact_attention.hpp"

namespace krc {

void add_copy(HeadOp& head, const std::vector<Entry>& copy) {
  std::map<int, int> index_of_destination;
  for (const auto& c : copy) {
    auto [it, fresh] = index_of_destination.emplace(c.col, head.value_dim);
    if (fresh) {
      head.output.push_back({head.value_dim, c.col, 1.0f});
      ++head.value_dim;
    }
    head.value.push_back({c.row, it->second, c.value});
  }
}

HeadOp fetch_from_offset(Features& f, int k, const std::vector<Entry>& copy, std::string name,
                         Role role) {
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Select;
  const Subspace& query_code = k == 0 ? f.position_code() : f.position_code_back(k);
  const Subspace& key_code = f.position_code();
  head.key_dim = key_code.width;
  for (int b = 0; b < key_code.width; ++b) {
    head.query.push_back({query_code[b], b, f.select_sharpness()});
    head.key.push_back({key_code[b], b, 1.0f});
  }
  add_copy(head, copy);
  return head;
}

HeadOp fetch_back_by_phase(Features& f, int k, const std::vector<Entry>& copy, std::string name,
                           Role role) {
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Select;
  const Subspace& phase = f.position_phase();
  const double lambda = f.select_sharpness();
  auto add = [](std::vector<Entry>& entries, int dim, int index, double w) {
    if (w != 0.0) entries.push_back({dim, index, static_cast<float>(w)});
  };
  // Frequency 0 (period 2) has only a cosine: cos(pi (t - k)) = cos(pi t) cos(pi k).
  add(head.query, phase[0], 0, lambda * Features::phase(k, 0).first);
  add(head.key, phase[0], 0, 1.0);
  for (int b = 1; b < f.code_bits(); ++b) {
    const int c = 2 * b - 1, s = 2 * b;  // query/key index = offset in the phase subspace
    const auto [cos_k, sin_k] = Features::phase(k, b);
    // (cos, sin)(w (t - k)) is (cos, sin)(w t) rotated by -w k.
    add(head.query, phase[c], c, lambda * cos_k);
    add(head.query, phase[s], c, lambda * sin_k);
    add(head.query, phase[s], s, lambda * cos_k);
    add(head.query, phase[c], s, -lambda * sin_k);
    add(head.key, phase[c], c, 1.0);
    add(head.key, phase[s], s, 1.0);
  }
  const int bos_index = phase.width;
  const double lambda_bos = 2.0 * lambda * f.code_bits();
  head.query.push_back({f.one()[0], bos_index, static_cast<float>(lambda_bos * (k + 0.5))});
  head.query.push_back({f.position()[0], bos_index, static_cast<float>(-lambda_bos)});
  head.key.push_back({f.bos()[0], bos_index, 1.0f});
  head.key_dim = phase.width + 1;
  add_copy(head, copy);
  return head;
}

HeadOp latest_flagged(Features& f, int flag_dim, const std::vector<Entry>& copy, std::string name,
                      Role role) {
  // Under `--norm layernorm` (fetches at kLayerNormSharpness) the runner-up keys must weigh
  // exactly 0 as well: the scores of exact_latest_flagged, 128 apart at least.
  if (f.select_sharpness() != kSelectSharpness)
    return exact_latest_flagged(f, {{flag_dim, 1.0f}}, copy, std::move(name), role);
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Select;
  head.key_dim = 2;
  const int one = f.one()[0];
  head.query.push_back({one, 0, kSelectSharpness * static_cast<float>(f.max_len() + 1)});
  head.key.push_back({flag_dim, 0, 1.0f});
  head.query.push_back({one, 1, kSelectSharpness});
  head.key.push_back({f.position()[0], 1, 1.0f});
  add_copy(head, copy);
  return head;
}

HeadOp prefix_sum(Features& f, const Terms& value, int destination, std::string name, Role role) {
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Average;
  head.key_dim = 1;
  head.query.push_back({f.log_remaining()[0], 0, 1.0f});
  head.key.push_back({f.bos()[0], 0, 1.0f});
  head.value_dim = 1;
  for (auto [dim, w] : value) head.value.push_back({dim, 0, w});
  head.output.push_back({0, destination, static_cast<float>(f.max_len() + 1)});
  return head;
}

HeadOp window_sum(Features& f, int block, bool previous, const Terms& value, int destination,
                  std::string name, Role role) {
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Average;
  const Subspace& query_code = f.block_code(block, previous);
  const Subspace& key_code = f.block_code(block, false);
  const int bits = key_code.width;
  head.key_dim = bits + 1;
  for (int b = 0; b < bits; ++b) {
    head.query.push_back({query_code[b], b, kSelectSharpness});
    head.key.push_back({key_code[b], b, 1.0f});
  }
  head.query.push_back({f.one()[0], bits, kSelectSharpness * static_cast<float>(bits)});
  if (!previous) head.query.push_back({f.log_remaining_in_block(block)[0], bits, 1.0f});
  head.key.push_back({f.bos()[0], bits, 1.0f});
  head.value_dim = 1;
  for (auto [dim, w] : value) head.value.push_back({dim, 0, w});
  head.output.push_back({0, destination, static_cast<float>(block + 1)});
  return head;
}

HeadOp block_sum(Features& f, int block, const Terms& value, int destination, std::string name,
                 Role role) {
  constexpr float kOutside = 120.0f;  // e^-120 underflows to 0 in float32
  HeadOp head;
  head.name = std::move(name);
  head.role = role;
  head.kind = HeadKind::Average;
  head.key_dim = 2;
  head.query.push_back({f.one()[0], 0, kOutside});
  head.key.push_back({f.block_start(block)[0], 0, 1.0f});
  head.key.push_back({f.bos()[0], 0, 1.0f});
  head.query.push_back({f.log_remaining_blocks(block)[0], 1, 1.0f});
  head.key.push_back({f.bos()[0], 1, 1.0f});
  head.value_dim = 1;
  for (auto [dim, w] : value) head.value.push_back({dim, 0, w});
  const long blocks = (static_cast<long>(f.max_len()) + block - 1) / block;
  head.output.push_back({0, destination, static_cast<float>(blocks + 1)});
  return head;
}

}  // namespace krc
