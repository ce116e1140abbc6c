// 16-bit float storage types. On the CPU they are storage plus conversion:
// kernels compute in float and round back on store.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>  // the conversion instructions (x86 with -march covering F16C)
#endif

namespace ember {

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
#if defined(__F16C__)
    // One instruction, rounding to nearest even as the code below; NaN keeps
    // the code below's fixed quiet payload.
    if (f == f) return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#endif
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) {  // inf or nan
      return static_cast<uint16_t>(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0u));
    }
    if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (x < 0x38800000u) {  // subnormal or zero in half
      if (x < 0x33000000u) return static_cast<uint16_t>(sign);
      const uint32_t mant = (x & 0x7fffffu) | 0x800000u;
      // value = mant * 2^(e - 150) and a half subnormal counts 2^-24: h = mant >> (126 - e)
      const int shift = 126 - static_cast<int>(x >> 23);
      uint32_t h = mant >> shift;
      const uint32_t rem = mant & ((1u << shift) - 1);
      const uint32_t half_point = 1u << (shift - 1);
      if (rem > half_point || (rem == half_point && (h & 1u))) ++h;
      return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = ((x - 0x38000000u) >> 13);
    const uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }

  static float to_float(uint16_t h) {
#if defined(__F16C__)
    if ((h & 0x7c00u) != 0x7c00u) return _cvtsh_ss(h);  // finite: exact in float either way
#endif
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1f) {
      x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
      if (mant == 0) {
        x = sign;
      } else {  // normalise a subnormal
        exp = 113;
        while (!(mant & 0x400u)) { mant <<= 1; --exp; }
        x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
      }
    } else {
      x = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}
  operator float() const {
    uint32_t x = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(x >> 16);
  }
};

}  // namespace ember
