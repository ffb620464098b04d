#pragma once
// Internal to the runtime.
// The float32 running sum of many bitwise-equal terms, as a sequential loop computes it:
//   s = start; repeat count times: s = fl(s + term)
// in O(binades crossed) instead of O(count). A softmax normaliser over a counter's keys (all
// but BOS's equal) or a value sum over equal value rows is such a sum; a framework computes
// it term by term, and so must the Float32 arithmetic, bit for bit.
//
// Why it can be jumped over: while s and s + term stay in one binade [2^E, 2^(E+1)) (or the
// subnormal range) of spacing u, fl(s + term) = s + r with r = term rounded to a multiple of u.
// Round-to-nearest-even decides a tie (term = (K + 1/2) u) by the parity of the result, so
// the increment may differ on the first step, but from an even s on it is the same every
// step (K when K is even, K + 1 when odd, both leaving s even). Adding a term that does not
// change s never changes it later (same s, same term). So: a few real steps in a binade to
// settle the increment d, then as many steps of exactly d as provably stay inside the binade
// (the count computed in double, backed off by 2), then real steps across the boundary.
namespace krc {

float sequential_sum_of_identical(float start, float term, long long count);

}  // namespace krc
