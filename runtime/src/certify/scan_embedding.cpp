// The scan certifier's embedding (scan_certifier.hpp): the static part of the residual at
// every t (a function of t alone: the position embedding and the letters' common part), and
// the window part of BOS and of every letter, the windows' domain before the first layer.
#include <algorithm>

#include "certify/certify_common.hpp"
#include "certify/scan_certifier.hpp"
#include "krc/automata/interrupt.hpp"

namespace krc::certify_detail {

using bounds::Accumulator;
using bounds::Interval;

void ScanCertifier::embedding(nlohmann::json& obligations) {
  static_part();
  letters_windows();
  const long long data_dims = std::count(static_.begin(), static_.end(), 0);
  obligations.push_back({{"kind", "embedding"},
                         {"positions", t_max_ + 1},
                         {"tokens", net_.token_embedding.rows()},
                         {"static_dims", d_ - data_dims},
                         {"window_dims", data_dims},
                         {"domain", domain_.size()}});
  record_domain(-1);
}

// static_at_[t]: BOS's static part at t = 0, a letter's (all equal, checked) at t >= 1.
void ScanCertifier::static_part() {
  static_at_.assign(t_max_ + 1, Vec(d_));
  auto static_of = [&](int token, int t, int c) {
    Accumulator acc;
    acc.add_constant(net_.token_embedding(token, c));
    acc.add_constant(net_.position_embedding(t, c));
    return bounds::store(format_, acc.result());
  };
  for (int t = 0; t <= t_max_; ++t) {
    interruption_point();  // one residual since the last (T may be 10^6)
    for (int c = 0; c < d_; ++c) {
      if (static_[c]) {
        static_at_[t][c] = static_of(0, t, c);
        continue;
      }
      if (net_.position_embedding(t, c) != 0.0f)
        refuse(-1, "embedding",
               "the position embedding of t = " + std::to_string(t) + " writes " +
                   number(net_.position_embedding(t, c)) + " to '" + net_.residual_labels[c] +
                   "', a dimension the layers write: it would not be a function of the window");
    }
  }
  for (int c = 0; c < d_; ++c) {
    if (!static_[c]) continue;
    for (int a = 1; a < net_.token_embedding.rows(); ++a)
      if (net_.token_embedding(a, c) != net_.token_embedding(1, c))
        refuse(-1, "embedding",
               "the letters' embeddings differ on '" + net_.residual_labels[c] +
                   "', a dimension no layer writes (a position code): the position part would "
                   "depend on the letter");
  }
  // t >= 1 holds a letter: the static part is the letter's (all equal), not BOS's.
  if (net_.token_embedding.rows() > 1)
    for (int t = 1; t <= t_max_; ++t)
      for (int c = 0; c < d_; ++c)
        if (static_[c]) static_at_[t][c] = static_of(1, t, c);
}

// BOS's window part (the identity) and every letter's (its action), the reference encodings.
void ScanCertifier::letters_windows() {
  auto data_of = [&](int token) {
    Vec v(d_);
    for (int c = 0; c < d_; ++c)
      if (!static_[c])
        v[c] = bounds::store(format_, Interval::point(net_.token_embedding(token, c)));
    return v;
  };
  bos_ = data_of(0);
  Tau id(a_.state_count());
  for (std::size_t q = 0; q < id.size(); ++q) id[q] = static_cast<StateId>(q);
  identity_ = id;
  for (std::size_t letter = 0; letter < a_.letter_count(); ++letter) {
    const Tau& tau = a_.letter_action(letter);
    Vec v = data_of(static_cast<int>(letter) + 1);
    auto [it, fresh] = domain_.emplace(tau, v);
    if (!fresh) it->second = joined(it->second, v);
    reference_.emplace(tau, it->second);
  }
  reference_.emplace(identity_, bos_);
}

void ScanCertifier::record_domain(int layer) {
  nlohmann::json taus = nlohmann::json::array();
  for (const auto& [tau, v] : domain_) taus.push_back(tau);
  invariant_.push_back({{"after_layer", layer}, {"domain_size", domain_.size()}, {"domain", taus}});
}

Vec ScanCertifier::joined(const Vec& a, const Vec& b) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = bounds::hull(a[i], b[i]);
  return r;
}

}  // namespace krc::certify_detail
