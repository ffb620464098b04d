#pragma once
// The bounds of `krc verify` and Network.verify that are neither lengths (those are the
// network's max_len) nor sizes: one value for both doors (issue 33, item 3).

namespace krc::front_door {

inline constexpr long long kMaxRandomWords = 1'000'000'000'000;  // --random, random=
inline constexpr int kMaxThreads = 1024;                         // --threads, threads=

}  // namespace krc::front_door
