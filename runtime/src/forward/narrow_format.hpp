#pragma once
// Rounding to the 16-bit formats a GPU framework stores a cast model in (README "bf16 and
// fp16"): round to nearest, ties to even, on the float32 value; values past the largest finite
// number become infinities, as a cast does.
#include <bit>
#include <cstdint>
#include <limits>

#include "krc/runtime/forward.hpp"

namespace krc::narrow {

// bfloat16: float32's exponent, 8 significant bits: the top 16 bits of a float32, rounded.
inline float round_bf16(float x) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return std::numeric_limits<float>::quiet_NaN();
  bits += 0x7fffu + ((bits >> 16) & 1u);  // ties to even; a carry into the exponent is right
  return std::bit_cast<float>(bits & 0xffff0000u);
}

// IEEE binary16: 11 significant bits, largest finite 65504, subnormals from 2^-24. GCC's
// _Float16 conversion rounds to nearest even and overflows to infinity.
inline float round_fp16(float x) { return static_cast<float>(static_cast<_Float16>(x)); }

// Whether the arithmetic stores its tensors in a 16-bit format.
inline bool is_narrow(Arithmetic a) {
  return a == Arithmetic::BFloat16 || a == Arithmetic::Float16;
}

// A rounding function chosen once per arithmetic.
using Rounding = float (*)(float);
inline Rounding rounding_of(Arithmetic a) {
  return a == Arithmetic::BFloat16 ? &round_bf16 : &round_fp16;
}

}  // namespace krc::narrow
