// The emulation's __half / __nv_bfloat16 conversions (tests/cpp/cuda_emulation.h,
// written with double arithmetic and nearbyint) against ember's CPU storage
// types (core/half.h, bit manipulation): every 16-bit pattern, random float
// bit patterns over the whole range, and the edges (subnormals, the overflow
// threshold, ties). Two independent roundings to nearest even must agree;
// this caught core/half.h rounding float16 subnormals with the wrong shift.
#include <cmath>
#include <cstring>
#include <random>

#include <ember/core/half.h>

#include "catch.h"
#include "cuda_emulation.h"

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Equal bits, or both NaN (any encoding) for a NaN input; inf_bits: the format's +inf.
bool same(uint16_t a, uint16_t b, float f, uint16_t inf_bits) {
  if (std::isnan(f)) return (a & 0x7fff) > inf_bits && (b & 0x7fff) > inf_bits;
  return a == b;
}

}  // namespace

TEST_CASE("cuda emulation: float16 / bfloat16 conversions agree with ember's CPU types", "[emulation]") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float fh = __half2float(__half{h}), fb = __bfloat162float(__nv_bfloat16{h});
    INFO("bits " << b);
    if (!std::isnan(fh)) {
      REQUIRE(fh == ember::Half::to_float(h));
      REQUIRE(__float2half_rn(fh).x == h);  // exact values round-trip
    }
    if (!std::isnan(fb)) {
      ember::BFloat16 e;
      e.bits = h;
      REQUIRE(fb == static_cast<float>(e));
      REQUIRE(__float2bfloat16_rn(fb).x == h);
    }
  }
  std::mt19937 rng(7);
  std::vector<float> values = {0.f, -0.f, 65504.f, 65519.f, 65520.f, -65520.f, 1e-8f, 2.9802322e-08f,
                               5.9604645e-08f, 8.940697e-08f, 6.097555e-05f, 6.1035156e-05f, 1.0009766f,
                               1.00048828125f, 1.00146484375f, 3.0517578125e-05f, 1e-5f, INFINITY, -INFINITY, NAN,
                               3.3895314e38f, 1e-40f};
  for (int i = 0; i < 200000; ++i) values.push_back(from_bits(static_cast<uint32_t>(rng())));
  for (int i = 0; i < 100000; ++i) {  // dense in float16's range, subnormals included
    values.push_back(std::ldexp(std::uniform_real_distribution<float>(-2.f, 2.f)(rng), static_cast<int>(rng() % 44) - 28));
  }
  for (float f : values) {
    INFO("value " << f);
    REQUIRE(same(__float2half_rn(f).x, ember::Half::from_float(f), f, 0x7c00));
    REQUIRE(same(__float2bfloat16_rn(f).x, ember::BFloat16::from_float(f), f, 0x7f80));
  }
}

TEST_CASE("cuda emulation: double -> 16-bit rounds once, not through float", "[emulation]") {
  // 1 + 2^-11 + 2^-40 is a tie as a float (float16 would round it down to 1);
  // rounded directly it lies above the tie and goes up to 1 + 2^-10.
  const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  REQUIRE(__half2float(__float2half_rn(static_cast<float>(d))) == 1.0f);
  REQUIRE(__half2float(__double2half(d)) == 1.0f + std::ldexp(1.0f, -10));
  const double e = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  REQUIRE(__bfloat162float(__double2bfloat16(e)) == 1.0f + std::ldexp(1.0f, -7));
}
