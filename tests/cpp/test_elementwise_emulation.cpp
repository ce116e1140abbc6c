// The CUDA elementwise formulas (cuda/device/unary_ops.cuh and
// binary_ops.cuh) run on the CPU through tests/cpp/cuda_emulation.h, inside
// the elementwise launcher's contiguous kernel (cuda/device/loops_kernels.cuh),
// against ember's CPU ops called through the C++ API on the same inputs: every
// op the CUDA files implement, in every dtype they dispatch (float16 and
// bfloat16 stored as such and computed in float, as cuda/unary.cu and
// binary.cu run them), over grids with 0, -0, +-inf, NaN, subnormals, large
// magnitudes, out-of-domain arguments and integer edges (all 8-bit values
// and pairs, every 16-bit float pattern). The op -> formula choice is the
// headers' visit_* functions, the ones the .cu files launch through, and a
// formula must exist exactly where the front-end sends that dtype to CUDA.
//
// Results must match bit for bit (NaN matches any NaN), except where the two
// sides use different float32 transcendental functions: the CPU's vectorized
// core/cpu/fast_math.h (exp < 1 ulp, expm1/tanh < 4, log/log1p < 3, erf <
// 3e-7) versus the device's expf / tanhf / ... (host libm here; CUDA
// documents 1 to 2 ulp). There a few float32 ulps, or one ulp of the 16-bit
// format after the single rounding, are accepted (kTranscendentalUlps); gelu's
// 1 + erf(x) and 1 + tanh(x) cancel for negative x, so there the absolute
// error of a few ulps of 1, times |x|, is accepted too (e.g. gelu(tanh) of
// -5.125: the device's tanhf gives -0.99999994 and -1.5e-7, fast_math's tanh
// -1 and -0). Signs of zero must match everywhere. float64 uses the same
// libm on both sides: exact. add/sub with alpha and lerp round a * b + c once
// on both sides (fma_tol has the exception for CPU builds without FMA).
// Integer division by zero raises on the CPU; the device gives 0 (documented
// in docs/cuda.md), which is checked separately.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/unary.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#pragma GCC diagnostic ignored "-Wunknown-pragmas"  // #pragma unroll
#include <ember/cuda/device/binary_ops.cuh>
#include <ember/cuda/device/loops_kernels.cuh>
#include <ember/cuda/device/unary_ops.cuh>

namespace {

namespace kc = ember::cuda;
namespace uo = ember::cuda::unary_ops;
namespace bo = ember::cuda::binary_ops;
using ember::BinaryOp;
using ember::DType;
using ember::Scalar;
using ember::Tensor;
using ember::UnaryOp;
using ember::add;
using ember::sub;

// ---- device element types

template <class D> constexpr bool is_half_v = std::is_same_v<D, __half> || std::is_same_v<D, __nv_bfloat16>;
template <class D> constexpr bool is_float_v = std::is_floating_point_v<D> || is_half_v<D>;
// What the .cu files compute D in.
template <class D> using compute_t = std::conditional_t<is_half_v<D>, float, D>;

template <class D> DType dtype_of() {
  if constexpr (std::is_same_v<D, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<D, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<D, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<D, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<D, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<D, __half>) return DType::Float16;
  else if constexpr (std::is_same_v<D, __nv_bfloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<D, float>) return DType::Float32;
  else return DType::Float64;
}

template <class D> double as_double(D v) {
  if constexpr (is_half_v<D>) return to_float(v);
  else return static_cast<double>(v);
}

template <class D> D from_double(double v) {
  if constexpr (std::is_same_v<D, __half>) return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn(static_cast<float>(v));
  else return static_cast<D>(v);
}

template <class D> uint64_t bits_of(D v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(D));
  return u;
}

// Bits ordered as the values are (+0 and -0 both 0), for ulp distances.
template <class D> int64_t ordered(D v) {
  const uint64_t u = bits_of(v), sign = uint64_t{1} << (8 * sizeof(D) - 1);
  const int64_t mag = static_cast<int64_t>(u & (sign - 1));
  return (u & sign) ? -mag : mag;
}

// A contiguous CPU tensor holding exactly v (ember's storage types have the
// device types' layout).
template <class D> Tensor tensor_from(const std::vector<D>& v) {
  Tensor t = ember::empty({static_cast<int64_t>(v.size())}, dtype_of<D>());
  D* p = static_cast<D*>(t.data_ptr());
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];  // (std::vector<bool> has no data())
  return t;
}

template <class D> const D* elems(const Tensor& t) { return static_cast<const D*>(t.data_ptr()); }

// Runs f over contiguous operands with the launcher's contiguous kernel
// (vector path when aligned, a grid-stride loop over a few blocks):
// out (of R) = f(in...).
template <class R, class... A, class F, class... T>
Tensor run_device(DType out_dtype, F f, const T&... in) {
  using O = kc::detail::Op<R, F, A...>;
  const Tensor first[] = {in...};
  const int64_t n = first[0].numel();
  Tensor out = ember::empty({n}, out_dtype);
  std::memset(out.data_ptr(), 0xA5, static_cast<size_t>(n) * out.element_size());  // unwritten: garbage
  kc::detail::Pointers<O::NT> p;
  p.data[0] = static_cast<char*>(out.data_ptr());
  for (int i = 0; i < O::NT - 1; ++i) {
    REQUIRE(first[i].numel() == n);
    REQUIRE(first[i].is_contiguous());
    p.data[i + 1] = static_cast<char*>(first[i].data_ptr());
  }
  constexpr size_t sizes[] = {sizeof(R), sizeof(A)...};
  bool aligned = true;
  for (int i = 0; i < O::NT; ++i) {
    aligned = aligned && reinterpret_cast<uintptr_t>(p.data[i]) % (sizes[i] * kc::kVec) == 0;
  }
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 1023) / 1024, 4));
  const kc::Scalars<O::NT> none;  // every operand a full array
  launch(std::max(blocks, 1u), kc::kThreads, 0, [&] { kc::detail::contiguous_kernel<O>(p, n, aligned, O{f}, none); });
  return out;
}

// ---- comparison

// Accepted differences: `ulps` in the stored format, or |got - want| <=
// per_x * |x| (x the first input).
struct Tol {
  int ulps = 0;
  double per_x = 0;
  bool nan_for_inf = false;  // NaN accepted for an infinity (and back)
};

template <class D> bool agrees(D got, D want, double x, Tol tol) {
  if (bits_of(got) == bits_of(want)) return true;
  if constexpr (is_float_v<D>) {
    const double g = as_double(got), w = as_double(want);
    if (tol.nan_for_inf && (std::isnan(g) || std::isnan(w)) && (std::isinf(g) || std::isinf(w))) return true;
    if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
    if (g == 0 && w == 0) return false;  // signs of zero differ
    const double dist = std::fabs(static_cast<double>(ordered(got)) - static_cast<double>(ordered(want)));
    return dist <= tol.ulps || std::fabs(g - w) <= tol.per_x * std::fabs(x);
  } else {
    return false;
  }
}

// Collects mismatches of one (op, dtype) and reports a few.
struct Report {
  std::string what;
  int64_t bad = 0;
  std::ostringstream first;
  void add(int64_t i, const std::string& inputs, double got, double want) {
    if (bad++ < 4) first << "\n  [" << i << "] " << inputs << ": got " << got << ", want " << want;
  }
  void check() {
    INFO(what << ": " << bad << " mismatches" << first.str());
    CHECK(bad == 0);
  }
};

template <class D> std::string show(D v) {
  std::ostringstream s;
  s.precision(17);
  s << as_double(v);
  return s.str();
}

// got vs want elementwise (both of D); xs: the first input, for messages and per_x.
template <class D, class X>
void compare(const Tensor& got, const Tensor& want, const std::vector<X>& xs, Tol tol, const std::string& what,
             const std::vector<X>* ys = nullptr, const std::vector<bool>* skip = nullptr) {
  REQUIRE(got.numel() == want.numel());
  REQUIRE(want.dtype() == dtype_of<D>());
  const Tensor w = want.contiguous();
  const D* g = elems<D>(got);
  const D* e = elems<D>(w);
  Report r{what};
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (skip && (*skip)[static_cast<size_t>(i)]) continue;
    if (!agrees(g[i], e[i], as_double(xs[static_cast<size_t>(i)]), tol)) {
      std::string in = "x " + show(xs[static_cast<size_t>(i)]);
      if (ys) in += ", y " + show((*ys)[static_cast<size_t>(i)]);
      r.add(i, in, as_double(g[i]), as_double(e[i]));
    }
  }
  r.check();
}

// ---- inputs

constexpr float kInf = std::numeric_limits<float>::infinity();

// Special float values: zeros, ones, halves (rounding ties), the edges of
// exp/log/sigmoid, the float16 range, subnormals, the extremes, inf, NaN.
std::vector<double> special_values() {
  return {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.49999997, -0.49999997, 2.0, 3.0, -3.0,
          0.1, -0.1, 1e-3, -1e-3, 1e-8, -1e-8, 7.0, -7.0, 10.0, -10.0, 20.0, -20.0, 30.0, -30.0, 88.7, 89.0, -87.0,
          -88.0, -103.0, -104.0, 100.0, -100.0, 1e10, -1e10, 1e20, 3e38, -3e38, 3.4028234663852886e38,
          -3.4028234663852886e38, 1.1754943508222875e-38, -1.1754943508222875e-38, 1e-40, -1e-40,
          1.401298464324817e-45, -1.401298464324817e-45, 65504.0, 65520.0, -65520.0, 6.1035156e-05, 5.9604645e-08,
          8388607.5, 8388608.0, 16777217.0, 3.14159265358979, -3.14159265358979, kInf, -kInf, NAN, -NAN};
}

template <class D> std::vector<D> float_inputs(unsigned seed) {
  std::vector<D> v;
  for (double s : special_values()) v.push_back(from_double<D>(s));
  if constexpr (std::is_same_v<D, double>) {
    for (double s : {1e300, -1e300, 1e-310, -1e-310, 4.9e-324, 1.7976931348623157e308, 710.0, -745.0, 1e-300})
      v.push_back(s);
  }
  for (int k = -480; k <= 480; ++k) v.push_back(from_double<D>(k / 16.0));  // [-30, 30], step 1/16
  for (int k = -149; k <= 127; k += 3) v.push_back(from_double<D>(std::ldexp(1.0, k)));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (int i = 0; i < 3000; ++i) v.push_back(from_double<D>(normal(rng) * std::pow(10.0, i % 7 - 3)));
  for (int i = 0; i < 3000; ++i) {  // random bit patterns: every exponent
    const uint64_t u = rng();
    D d;
    std::memcpy(&d, &u, sizeof(D));
    v.push_back(d);
  }
  return v;
}

template <class D> std::vector<D> all_patterns() {  // every value of a 1- or 2-byte type
  std::vector<D> v;
  for (uint32_t u = 0; u < (1u << (8 * sizeof(D))); ++u) {
    D d;
    std::memcpy(&d, &u, sizeof(D));
    v.push_back(d);
  }
  return v;
}

template <class D> std::vector<D> int_inputs(unsigned seed) {
  using L = std::numeric_limits<D>;
  std::vector<D> v = {L::min(), static_cast<D>(L::min() + 1), static_cast<D>(L::max() - 1), L::max()};
  for (int64_t k : {-65536, -46341, -46340, -1000, -129, -128, -127, 127, 128, 255, 256, 46340, 46341, 65535, 65536})
    v.push_back(static_cast<D>(k));
  for (int k = -20; k <= 20; ++k) v.push_back(static_cast<D>(k));
  if constexpr (sizeof(D) == 8) {
    for (int64_t k : {int64_t{1} << 32, -(int64_t{1} << 32), int64_t{3037000499}, int64_t{3037000500}})
      v.push_back(static_cast<D>(k));
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 400; ++i) v.push_back(static_cast<D>(rng()));
  for (int i = 0; i < 400; ++i) v.push_back(static_cast<D>(static_cast<int64_t>(rng() % 2001) - 1000));
  return v;
}

// The unary ops' inputs: every value of the 8- and 16-bit types.
template <class D> std::vector<D> unary_inputs() {
  if constexpr (std::is_same_v<D, bool>) return {false, true};
  else if constexpr (sizeof(D) <= 2) return all_patterns<D>();
  else if constexpr (std::is_floating_point_v<D>) return float_inputs<D>(11);
  else return int_inputs<D>(11);
}

// Pairs (x, y) for binary ops: every pair of 8-bit values; the cross
// product of a small grid plus random pairs for wider types.
template <class D> void binary_inputs(std::vector<D>& xs, std::vector<D>& ys) {
  std::vector<D> grid;
  if constexpr (std::is_same_v<D, bool>) {
    grid = {false, true};
  } else if constexpr (sizeof(D) == 1) {
    grid = all_patterns<D>();
  } else if constexpr (is_float_v<D>) {
    for (double s : special_values()) grid.push_back(from_double<D>(s));
  } else {
    grid = int_inputs<D>(5);
    grid.resize(60);  // the edges and small values
  }
  for (D a : grid)
    for (D b : grid) xs.push_back(a), ys.push_back(b);
  if constexpr (sizeof(D) > 1) {
    std::vector<D> a, b;
    if constexpr (is_half_v<D>) {
      a = all_patterns<D>();  // every float16 / bfloat16 against a random partner
      b = a;
      std::shuffle(b.begin(), b.end(), std::mt19937(3));
    } else if constexpr (is_float_v<D>) {
      a = float_inputs<D>(21), b = float_inputs<D>(22);
      std::shuffle(b.begin(), b.end(), std::mt19937(4));
    } else {
      a = int_inputs<D>(21), b = int_inputs<D>(22);
      std::shuffle(b.begin(), b.end(), std::mt19937(4));
    }
    xs.insert(xs.end(), a.begin(), a.end());
    ys.insert(ys.end(), b.begin(), b.begin() + static_cast<std::ptrdiff_t>(a.size()));
  }
}

// ---- unary ops

struct UnaryCase {
  UnaryOp op;
  const char* name;
  std::function<Tensor(const Tensor&)> cpu;
};

std::vector<UnaryCase> unary_cases() {
  return {
      {UnaryOp::Neg, "neg", [](const Tensor& x) { return ember::neg(x); }},
      {UnaryOp::Abs, "abs", [](const Tensor& x) { return ember::abs(x); }},
      {UnaryOp::Sign, "sign", [](const Tensor& x) { return ember::sign(x); }},
      {UnaryOp::Square, "square", [](const Tensor& x) { return ember::square(x); }},
      {UnaryOp::Relu, "relu", [](const Tensor& x) { return ember::relu(x); }},
      {UnaryOp::Floor, "floor", [](const Tensor& x) { return ember::floor(x); }},
      {UnaryOp::Ceil, "ceil", [](const Tensor& x) { return ember::ceil(x); }},
      {UnaryOp::Round, "round", [](const Tensor& x) { return ember::round(x); }},
      {UnaryOp::Exp, "exp", [](const Tensor& x) { return ember::exp(x); }},
      {UnaryOp::Log, "log", [](const Tensor& x) { return ember::log(x); }},
      {UnaryOp::Log1p, "log1p", [](const Tensor& x) { return ember::log1p(x); }},
      {UnaryOp::Expm1, "expm1", [](const Tensor& x) { return ember::expm1(x); }},
      {UnaryOp::Sqrt, "sqrt", [](const Tensor& x) { return ember::sqrt(x); }},
      {UnaryOp::Rsqrt, "rsqrt", [](const Tensor& x) { return ember::rsqrt(x); }},
      {UnaryOp::Sin, "sin", [](const Tensor& x) { return ember::sin(x); }},
      {UnaryOp::Cos, "cos", [](const Tensor& x) { return ember::cos(x); }},
      {UnaryOp::Tanh, "tanh", [](const Tensor& x) { return ember::tanh(x); }},
      {UnaryOp::Sigmoid, "sigmoid", [](const Tensor& x) { return ember::sigmoid(x); }},
      {UnaryOp::Reciprocal, "reciprocal", [](const Tensor& x) { return ember::reciprocal(x); }},
      {UnaryOp::Erf, "erf", [](const Tensor& x) { return ember::erf(x); }},
      {UnaryOp::GeluErf, "gelu", [](const Tensor& x) { return ember::gelu(x, "none"); }},
      {UnaryOp::GeluTanh, "gelu(tanh)", [](const Tensor& x) { return ember::gelu(x, "tanh"); }},
      {UnaryOp::Silu, "silu", [](const Tensor& x) { return ember::silu(x); }},
  };
}

// float32 ulps accepted between fast_math.h and libm (see the top comment).
// The largest seen over these inputs is 3 (erf near +-1, tanh); sigmoid,
// silu and softplus compose exp with a division or log1p. On a GPU, CUDA's own
// 1-2 ulps (its expf, tanhf, ...) come on top of libm's.
constexpr int kTranscendentalUlps = 4;

// The accepted difference of an op computed in float for storage D.
template <class D> Tol transcendental_tol(bool cancels) {
  if constexpr (std::is_same_v<D, float>) return {kTranscendentalUlps, cancels ? 8 * 0x1p-24 : 0.0};
  else if constexpr (is_half_v<D>) return {1, cancels ? 8 * 0x1p-24 : 0.0};  // one rounding: an adjacent value
  else return {};
}

template <class D> Tol unary_tol(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: case UnaryOp::Expm1: case UnaryOp::Log: case UnaryOp::Log1p: case UnaryOp::Tanh:
    case UnaryOp::Sigmoid: case UnaryOp::Silu: case UnaryOp::Erf:
      return transcendental_tol<D>(false);
    case UnaryOp::GeluErf: case UnaryOp::GeluTanh: return transcendental_tol<D>(true);
    default: return {};
  }
}

template <class D> void check_unary() {
  using C = compute_t<D>;
  const std::vector<D> xs = unary_inputs<D>();
  const Tensor x = tensor_from(xs);
  const std::string type = ember::dtype_name(dtype_of<D>());
  for (const UnaryCase& c : unary_cases()) {
    Tensor want;
    try {
      want = c.cpu(x);
    } catch (const std::exception&) {
    }
    // The front-end sends D to the CUDA kernel when the op keeps the dtype.
    const bool sent = want.defined() && want.dtype() == x.dtype();
    Tensor got;
    const bool has =
        uo::visit_unary<C>(c.op, [&](auto f) { got = run_device<D, D>(x.dtype(), uo::stored_as<D, C>(f), x); });
    INFO(c.name << " on " << type);
    CHECK(has == sent);
    if (has && sent) compare<D>(got, want, xs, unary_tol<D>(c.op), c.name + (" on " + type));
  }
}

// The CPU op's result, or an undefined tensor where the front-end refuses.
Tensor cpu_or_none(const std::function<Tensor()>& f) {
  try {
    return f();
  } catch (const std::exception&) {
    return {};
  }
}

// One (op, dtype) of the parameterized unary ops: `visit(v)` is the .cu's
// choice of formula. The front-end sends D when the CPU result keeps it; the
// device must then have a formula (where the dtype alone decides, also the
// reverse: `exact_set`).
template <class D, class X, class Visit>
void check_case(const std::string& what, const Tensor& want, const std::vector<X>& xs, Tol tol, Visit visit,
                bool exact_set = true) {
  Tensor got;
  const bool sent = want.defined() && want.dtype() == dtype_of<D>();
  const bool has = visit(got);
  INFO(what);
  if (exact_set) CHECK(has == sent);
  else if (sent) CHECK(has);
  if (has && sent) compare<D>(got, want, xs, tol, what);
}

// A shuffled copy of v (second operands, bounds).
template <class D> std::vector<D> shuffled(std::vector<D> v, unsigned seed) {
  std::vector<D> r(v.begin(), v.end());
  std::mt19937 rng(seed);
  for (size_t i = r.size(); i > 1; --i) {  // by hand: std::swap does not take std::vector<bool>'s references
    const size_t j = rng() % i;
    const D t = r[i - 1];
    r[i - 1] = r[j];
    r[j] = t;
  }
  return r;
}

// softplus, clamp (number and tensor bounds), pow, nan_to_num and the
// backward masks, in the dtypes their CUDA kernels dispatch (the front-end
// computes the half types in float32 for them).
template <class D> void check_unary_params() {
  const std::vector<D> xs = unary_inputs<D>();
  const Tensor x = tensor_from(xs);
  const DType dt = x.dtype();
  const std::string on = std::string(" on ") + ember::dtype_name(dt);
  auto unary_run = [&](auto visit_fn) {
    return [&, visit_fn](Tensor& got) { return visit_fn([&](auto f) { got = run_device<D, D>(dt, f, x); }); };
  };
  const Tol soft = std::is_same_v<D, float> ? Tol{kTranscendentalUlps} : Tol{};  // fast_math log1p(exp)

  for (auto [beta, threshold] : {std::pair{1.0, 20.0}, {2.0, 1.0}, {0.5, 5.0}, {-1.0, 20.0}}) {
    const Tensor want = cpu_or_none([&] { return ember::softplus(x, beta, threshold); });
    check_case<D>("softplus" + on, want, xs, soft,
                  unary_run([&](auto v) { return uo::visit_softplus<D>(beta, threshold, v); }));
  }

  using Bound = std::optional<Scalar>;
  std::vector<std::pair<Bound, Bound>> bounds;
  if constexpr (std::is_floating_point_v<D>) {
    bounds = {{-1.5, 2.5}, {Bound{}, 0.5}, {-0.5, Bound{}}, {3.0, -3.0}, {NAN, 1.0}, {0.0, NAN}, {-kInf, 0.0}};
  } else if constexpr (std::is_same_v<D, bool>) {
    bounds = {{false, true}, {true, Bound{}}, {Bound{}, false}};
  } else {
    bounds = {{int64_t{-3}, int64_t{7}}, {Bound{}, int64_t{5}}, {int64_t{-5}, Bound{}}, {int64_t{100}, int64_t{-100}}};
  }
  for (const auto& [lo, hi] : bounds) {
    const Tensor want = cpu_or_none([&] { return ember::clamp(x, lo, hi); });
    check_case<D>("clamp(number bounds)" + on, want, xs, {}, unary_run([&](auto v) {
      uo::visit_clamp<D>(lo, hi, v);
      return true;
    }), false);
  }

  const std::vector<D> los = shuffled(xs, 1), his = shuffled(xs, 2);
  const Tensor lo = tensor_from(los), hi = tensor_from(his);
  // cuda/unary.cu picks the functor (and operands) by which bounds are given.
  auto both = [&](Tensor& got) {
    return (got = run_device<D, D, D, D>(dt, uo::ClampTensorBoth<D>{}, x, lo, hi)).defined();
  };
  auto min = [&](Tensor& got) { return (got = run_device<D, D, D>(dt, uo::ClampTensorMin<D>{}, x, lo)).defined(); };
  auto max = [&](Tensor& got) { return (got = run_device<D, D, D>(dt, uo::ClampTensorMax<D>{}, x, hi)).defined(); };
  const Tensor none;
  check_case<D>("clamp(tensor bounds)" + on, cpu_or_none([&] { return ember::clamp(x, lo, hi); }), xs, {}, both, false);
  check_case<D>("clamp(tensor min)" + on, cpu_or_none([&] { return ember::clamp(x, lo, none); }), xs, {}, min, false);
  check_case<D>("clamp(tensor max)" + on, cpu_or_none([&] { return ember::clamp(x, none, hi); }), xs, {}, max, false);

  std::vector<Scalar> exponents;
  if constexpr (std::is_floating_point_v<D>) {
    for (double e : {2.0, 3.0, 1.0, 0.5, -1.0, -0.5, 0.0, 2.5, -2.0, 1.0 / 3, -3.0, 100.0, -100.0}) {
      exponents.push_back(e);
    }
  } else {
    for (int64_t e : {0, 1, 2, 3, 5, 7, 63, 64, -1, -2}) exponents.push_back(e);
  }
  for (const Scalar& e : exponents) {
    const Tensor want = cpu_or_none([&] { return ember::pow(x, e); });
    check_case<D>("pow(x, " + std::to_string(e.to_double()) + ")" + on, want, xs, {},
                  unary_run([&](auto v) { return uo::visit_pow_scalar<D>(e, v); }), false);
  }
  std::vector<D> es;  // tensor exponents
  if constexpr (std::is_floating_point_v<D>) {
    const std::vector<double> ev = {0, -0.0, 1, -1, 2, 0.5, -0.5, 3, 2.5, kInf, -kInf, NAN, 1.0 / 3, 100, -100, 1e-3};
    for (size_t i = 0; i < xs.size(); ++i) es.push_back(static_cast<D>(ev[i % ev.size()]));
  } else if constexpr (!std::is_same_v<D, bool>) {
    const std::vector<int> ev = {0, 1, 2, 3, 4, 5, 7, 8, 15, 31, 63, 64, 100, 127};
    for (size_t i = 0; i < xs.size(); ++i) es.push_back(static_cast<D>(ev[i % ev.size()]));
  } else {
    es = shuffled(xs, 3);
  }
  const Tensor e = tensor_from(es);
  check_case<D>("pow(x, tensor)" + on, cpu_or_none([&] { return ember::pow(x, e); }), xs, {}, [&](Tensor& got) {
    return uo::visit_pow<D>([&](auto f) { got = run_device<D, D, D>(dt, f, x, e); });
  });

  for (auto [n, p, m] : {std::tuple{0.0, 3.4028234663852886e38, -3.4028234663852886e38}, {1.5, 2.0, -3.0}}) {
    const Tensor want = cpu_or_none([&] { return ember::nan_to_num(x, n, p, m); });
    check_case<D>("nan_to_num" + on, want, xs, {}, unary_run([&](auto v) {
      uo::visit_nan_to_num<D>(n, p, m, v);
      return true;
    }), false);
  }

  using Lim = std::optional<double>;
  for (auto [l, h] : {std::pair<Lim, Lim>{-1.0, 1.0}, {Lim{}, 0.0}, {0.0, Lim{}}, {Lim{}, Lim{}}}) {
    const Tensor want = cpu_or_none([&] { return ember::in_range_mask(x, l, h); });
    check_case<D>("in_range_mask" + on, want, xs, {},
                  unary_run([&](auto v) { return uo::visit_in_range_mask<D>(l, h, v); }));
  }
  check_case<D>("isfinite_mask" + on, cpu_or_none([&] { return ember::isfinite_mask(x); }), xs, {}, [&](Tensor& got) {
    if constexpr (!std::is_floating_point_v<D>) return false;  // cuda/unary.cu raises
    else got = run_device<D, D>(dt, uo::IsFinite<D>{}, x);
    return true;
  });
  const Tensor keep = tensor_from(shuffled(xs, 4));
  check_case<D>("keep_where" + on, cpu_or_none([&] { return ember::keep_where(x, keep); }), xs, {}, [&](Tensor& got) {
    got = run_device<D, D, D>(dt, uo::KeepWhere<D>{}, x, keep);
    return true;
  }, false);
}

// ---- binary ops

// Whether ember's CPU kernels round a + alpha * b once, as the device's
// fused() does: they do when their compiler contracts it to an FMA (the
// default -march=native on an x86-64 with FMA units). Without, an add/sub
// with alpha or a lerp may differ by an ulp, or give NaN for inf where
// a * b overflows; that is then accepted (fma_tol).
bool cpu_fuses_multiply_add() {
  const float y = -0.49999997f;  // 2.5 * y needs more bits than a float holds
  const Tensor r = ember::add(ember::full({1}, 1.0, DType::Float32), ember::full({1}, y, DType::Float32), 2.5);
  return r.item().to_double() == static_cast<double>(std::fma(2.5f, y, 1.0f));
}

Tol fma_tol() {
  static const bool fuses = cpu_fuses_multiply_add();
  return fuses ? Tol{} : Tol{1, 0, true};
}

struct BinaryCase {
  BinaryOp op;
  std::string name;
  Scalar alpha;
  std::function<Tensor(const Tensor&, const Tensor&)> cpu;
};

template <class D> std::vector<BinaryCase> binary_cases() {
  std::vector<Scalar> alphas;  // of the kind the front-end accepts for D
  if constexpr (std::is_same_v<D, bool>) alphas = {true, false};
  else if constexpr (is_float_v<D>) alphas = {1.0, 2.5, -1.0, 0.0};
  else alphas = {int64_t{1}, int64_t{3}, int64_t{-1}, int64_t{0}};
  std::vector<BinaryCase> cases;
  for (const Scalar& a : alphas) {
    const std::string s = "(alpha " + std::to_string(a.to_double()) + ")";
    cases.push_back({BinaryOp::Add, "add" + s, a, [a](const Tensor& x, const Tensor& y) { return add(x, y, a); }});
    cases.push_back({BinaryOp::Sub, "sub" + s, a, [a](const Tensor& x, const Tensor& y) { return sub(x, y, a); }});
  }
  using F = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::tuple<BinaryOp, const char*, F>> plain = {
      {BinaryOp::Mul, "mul", [](const Tensor& x, const Tensor& y) { return ember::mul(x, y); }},
      {BinaryOp::Div, "div", [](const Tensor& x, const Tensor& y) { return ember::div(x, y); }},
      {BinaryOp::DivTrunc, "div(trunc)", [](const Tensor& x, const Tensor& y) { return ember::div(x, y, "trunc"); }},
      {BinaryOp::DivFloor, "div(floor)", [](const Tensor& x, const Tensor& y) { return ember::div(x, y, "floor"); }},
      {BinaryOp::Remainder, "remainder", [](const Tensor& x, const Tensor& y) { return ember::remainder(x, y); }},
      {BinaryOp::Maximum, "maximum", [](const Tensor& x, const Tensor& y) { return ember::maximum(x, y); }},
      {BinaryOp::Minimum, "minimum", [](const Tensor& x, const Tensor& y) { return ember::minimum(x, y); }},
      {BinaryOp::BitwiseAnd, "bitwise_and", [](const Tensor& x, const Tensor& y) { return ember::bitwise_and(x, y); }},
      {BinaryOp::BitwiseOr, "bitwise_or", [](const Tensor& x, const Tensor& y) { return ember::bitwise_or(x, y); }},
      {BinaryOp::BitwiseXor, "bitwise_xor", [](const Tensor& x, const Tensor& y) { return ember::bitwise_xor(x, y); }},
      {BinaryOp::Eq, "eq", [](const Tensor& x, const Tensor& y) { return ember::eq(x, y); }},
      {BinaryOp::Ne, "ne", [](const Tensor& x, const Tensor& y) { return ember::ne(x, y); }},
      {BinaryOp::Lt, "lt", [](const Tensor& x, const Tensor& y) { return ember::lt(x, y); }},
      {BinaryOp::Le, "le", [](const Tensor& x, const Tensor& y) { return ember::le(x, y); }},
      {BinaryOp::Gt, "gt", [](const Tensor& x, const Tensor& y) { return ember::gt(x, y); }},
      {BinaryOp::Ge, "ge", [](const Tensor& x, const Tensor& y) { return ember::ge(x, y); }},
      {BinaryOp::LogicalAnd, "logical_and", [](const Tensor& x, const Tensor& y) { return ember::logical_and(x, y); }},
      {BinaryOp::LogicalOr, "logical_or", [](const Tensor& x, const Tensor& y) { return ember::logical_or(x, y); }},
      {BinaryOp::LogicalXor, "logical_xor", [](const Tensor& x, const Tensor& y) { return ember::logical_xor(x, y); }},
  };
  for (const auto& [op, name, f] : plain) cases.push_back({op, name, int64_t{1}, f});
  return cases;
}

template <class D> void check_binary() {
  using C = compute_t<D>;
  std::vector<D> xs, ys;
  binary_inputs<D>(xs, ys);
  const Tensor x = tensor_from(xs), y = tensor_from(ys);
  const DType dt = x.dtype();
  const std::string on = std::string(" on ") + ember::dtype_name(dt);
  // Integer division by zero raises on the CPU: its reference divides by 1 there.
  std::vector<bool> zero(ys.size(), false);
  std::vector<D> safe_ys = ys;
  if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    for (size_t i = 0; i < ys.size(); ++i) {
      if (ys[i] == D(0)) zero[i] = true, safe_ys[i] = D(1);
    }
  }
  const Tensor safe_y = tensor_from(safe_ys);
  for (const BinaryCase& c : binary_cases<D>()) {
    const bool divides = c.op == BinaryOp::DivTrunc || c.op == BinaryOp::DivFloor || c.op == BinaryOp::Remainder;
    const bool to_bool = ember::is_bool_result(c.op);
    // Comparisons of float16/bfloat16 reach CUDA as float32 (core/ops/binary.cpp): the float32 run covers them.
    if (to_bool && is_half_v<D>) continue;
    const Tensor want = cpu_or_none([&] { return c.cpu(x, divides ? safe_y : y); });
    const DType out = to_bool ? DType::Bool : dt;
    const bool sent = want.defined() && want.dtype() == out;
    Tensor got;
    bool has = false;
    if (to_bool) {
      if constexpr (!is_half_v<D>) {
        has = bo::visit_compare<D>(c.op, [&](auto f) { got = run_device<bool, D, D>(out, f, x, y); });
      }
    } else if constexpr (std::is_same_v<D, bool>) {
      has = bo::visit_bool_arithmetic(c.op, c.alpha, [&](auto f) { got = run_device<bool, bool, bool>(out, f, x, y); });
    } else {
      has = bo::visit_arithmetic<C>(c.op, c.alpha,
                                    [&](auto f) { got = run_device<D, D, D>(out, bo::stored2_as<D, C>(f), x, y); });
    }
    INFO(c.name << on);
    CHECK(has == sent);
    if (!has || !sent) continue;
    if (to_bool) {
      compare<bool>(got, want, xs, {}, c.name + on, &ys);
    } else {
      const bool scaled = (c.op == BinaryOp::Add || c.op == BinaryOp::Sub) && c.alpha.to_double() != 1;
      const Tol tol = scaled && is_float_v<D> ? fma_tol() : Tol{};
      compare<D>(got, want, xs, tol, c.name + on, &ys, divides ? &zero : nullptr);
      if (divides) {  // the device's documented answer to an integer division by zero
        Report r{c.name + on + " by zero"};
        for (size_t i = 0; i < ys.size(); ++i) {
          const D g = elems<D>(got)[i];
          if (zero[i] && bits_of(g) != 0) r.add(static_cast<int64_t>(i), "x " + show(xs[i]), as_double(g), 0);
        }
        r.check();
      }
    }
  }
}

// logical_not, bitwise_not, where, lerp and masked_fill.
template <class D> void check_binary_others() {
  std::vector<D> xs, ys;
  binary_inputs<D>(xs, ys);
  const Tensor x = tensor_from(xs), y = tensor_from(ys);
  const DType dt = x.dtype();
  const std::string on = std::string(" on ") + ember::dtype_name(dt);
  using U = typename kc::Bits<sizeof(D)>::type;

  if constexpr (!is_half_v<D>) {  // half types reach logical_not as float32
    const Tensor want = cpu_or_none([&] { return ember::logical_not(x); });
    check_case<bool>("logical_not" + on, want, xs, {}, [&](Tensor& got) {
      got = run_device<bool, D>(DType::Bool, bo::LogicalNot<D>{}, x);
      return true;
    });
    const Tensor want_not = cpu_or_none([&] { return ember::bitwise_not(x); });
    check_case<D>("bitwise_not" + on, want_not, xs, {}, [&](Tensor& got) {
      if constexpr (std::is_same_v<D, bool>) got = run_device<bool, bool>(dt, bo::BoolNot{}, x);
      else if constexpr (std::is_integral_v<D>) got = run_device<D, D>(dt, bo::BitNot<D>{}, x);
      else return false;  // cuda/binary.cu raises
      return true;
    });
  }

  std::vector<bool> conds(xs.size());
  for (size_t i = 0; i < conds.size(); ++i) conds[i] = (i * 7 + i / 5) % 3 == 0;
  const Tensor cond = tensor_from(conds);
  check_case<D>("where" + on, cpu_or_none([&] { return ember::where(cond, x, y); }), xs, {}, [&](Tensor& got) {
    got = run_device<U, bool, U, U>(dt, bo::Select<U>{}, cond, x, y);
    return true;
  });

  if constexpr (std::is_floating_point_v<D>) {  // half types reach lerp as float32
    const std::vector<double> wv = {0, 1, 0.5, 0.25, -1, 2, 0.49999997, 0.50000006, NAN, kInf, -0.0, 0.75};
    std::vector<D> ws;
    for (size_t i = 0; i < xs.size(); ++i) ws.push_back(static_cast<D>(wv[i % wv.size()]));
    const Tensor w = tensor_from(ws);
    check_case<D>("lerp" + on, cpu_or_none([&] { return ember::lerp(x, y, w); }), xs, fma_tol(), [&](Tensor& got) {
      got = run_device<D, D, D, D>(dt, bo::Lerp<D>{}, x, y, w);
      return true;
    });
  }

  std::vector<Scalar> values;
  if constexpr (std::is_same_v<D, bool>) values = {true, false};
  else if constexpr (is_float_v<D>) values = {0.0, -0.0, 2.5, NAN, -kInf, 1e10, 1e-30, 0.1};
  else values = {int64_t{0}, int64_t{-1}, int64_t{127}, int64_t{1000}, int64_t{-70000}};
  for (const Scalar& v : values) {
    const Tensor want = cpu_or_none([&] { return ember::masked_fill(x, cond, ember::scalar_tensor(v)); });
    check_case<D>("masked_fill(" + std::to_string(v.to_double()) + ")" + on, want, xs, {}, [&](Tensor& got) {
      // cuda/binary.cu's scalar_as: the half types through float, others Scalar::to.
      D d;
      if constexpr (is_half_v<D>) d = from_double<D>(static_cast<float>(v.to_double()));
      else d = v.to<D>();
      U bits;
      std::memcpy(&bits, &d, sizeof(D));
      got = run_device<U, U, bool>(dt, bo::FillWhere<U>{bits}, x, cond);
      return true;
    });
  }
}

// A half tensor with a float number (run_half_number, cuda/binary_typed.cuh):
// the number stays float on either side and the result rounds once, as the
// CPU computes x * 0.1 for a half x (float32, 0.1f). The number travels as a
// full float array here; the launcher passes it as one value on the GPU.
template <class D> void check_half_number() {
  std::vector<D> xs, ys;
  binary_inputs<D>(xs, ys);
  const Tensor x = tensor_from(xs);
  const DType dt = x.dtype();
  const Tensor wide = x.to(DType::Float32);
  const std::pair<const char*, BinaryOp> ops[] = {
      {"add", BinaryOp::Add}, {"sub", BinaryOp::Sub}, {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div}};
  for (const float number : {0.1f, -2.5f, 1e-3f, 3.0e4f}) {
    const Tensor numbers = ember::full({x.numel()}, number, DType::Float32);
    for (const auto& [name, op] : ops) {
      const auto cpu = [op = op](const Tensor& a, const Tensor& b) {
        switch (op) {
          case BinaryOp::Add: return ember::add(a, b);
          case BinaryOp::Sub: return ember::sub(a, b);
          case BinaryOp::Mul: return ember::mul(a, b);
          default: return ember::div(a, b);
        }
      };
      const std::string what = std::string(name) + " with " + std::to_string(number) + " on " + ember::dtype_name(dt);
      Tensor first, second;
      bo::visit_arithmetic<float>(op, Scalar(1), [&](auto f) {
        using F = decltype(f);
        first = run_device<D, float, D>(dt, bo::NumberThenWidened<D, F>{f}, numbers, x);
        second = run_device<D, D, float>(dt, bo::WidenedThenNumber<D, F>{f}, x, numbers);
      });
      compare<D>(first, cpu(numbers, wide).to(dt), xs, {}, "number " + what);
      compare<D>(second, cpu(wide, numbers).to(dt), xs, {}, what + " number");
    }
  }
}

}  // namespace

TEST_CASE("cuda unary formulas (host emulation) match the CPU ops in every dtype",
          "[emulation][elementwise_emulation]") {
  check_unary<float>();
  check_unary<double>();
  check_unary<__half>();
  check_unary<__nv_bfloat16>();
  check_unary<uint8_t>();
  check_unary<int8_t>();
  check_unary<int32_t>();
  check_unary<int64_t>();
  check_unary<bool>();
}

TEST_CASE("cuda softplus / clamp / pow / nan_to_num / mask formulas (host emulation) match the CPU ops",
          "[emulation][elementwise_emulation]") {
  check_unary_params<float>();
  check_unary_params<double>();
  check_unary_params<uint8_t>();
  check_unary_params<int8_t>();
  check_unary_params<int32_t>();
  check_unary_params<int64_t>();
  check_unary_params<bool>();
}

TEST_CASE("cuda binary formulas (host emulation) match the CPU ops in every dtype",
          "[emulation][elementwise_emulation]") {
  check_binary<float>();
  check_binary<double>();
  check_binary<__half>();
  check_binary<__nv_bfloat16>();
  check_binary<uint8_t>();
  check_binary<int8_t>();
  check_binary<int32_t>();
  check_binary<int64_t>();
  check_binary<bool>();
}

TEST_CASE("cuda half-precision arithmetic with a float number (host emulation) rounds once as the CPU does",
          "[emulation][elementwise_emulation]") {
  check_half_number<__half>();
  check_half_number<__nv_bfloat16>();
}

TEST_CASE("cuda logical_not / bitwise_not / where / lerp / masked_fill formulas (host emulation) match the CPU ops",
          "[emulation][elementwise_emulation]") {
  check_binary_others<float>();
  check_binary_others<double>();
  check_binary_others<__half>();
  check_binary_others<__nv_bfloat16>();
  check_binary_others<uint8_t>();
  check_binary_others<int8_t>();
  check_binary_others<int32_t>();
  check_binary_others<int64_t>();
  check_binary_others<bool>();
}
