// CUDA kernels of the unary family: one device functor per op, run by the
// elementwise launcher (cuda/device/loops.cuh). The plain unary ops also take
// float16/bfloat16 tensors directly, computing in float. Semantics follow
// core/cpu/unary.cpp (NaN handling, rounding half to even, integer pow).
#include <ember/cuda/unary.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/copy.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda {

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kSqrtHalf = 0.70710678118654752440;

// Half types are stored as S and computed in float: f takes and returns T.
template <class S, class F>
struct Widened {
  F f;
  __device__ S operator()(S x) const { return convert<S>(f(widen(x))); }
};

template <class S, class T, class F>
void launch_as(const TensorIterator& it, F f) {
  if constexpr (std::is_same_v<S, T>) launch<T, T>(it, f);
  else launch<S, S>(it, Widened<S, F>{f});
}

template <class T, class S = T>
bool common_op(UnaryOp op, const TensorIterator& it) {
  switch (op) {
    case UnaryOp::Neg: launch_as<S, T>(it, [] __device__(T x) { return static_cast<T>(-x); }); return true;
    case UnaryOp::Abs:
      if constexpr (std::is_unsigned_v<T>) launch_as<S, T>(it, [] __device__(T x) { return x; });
      else launch_as<S, T>(it, [] __device__(T x) { return static_cast<T>(x < T(0) ? -x : x); });
      return true;
    case UnaryOp::Sign:
      if constexpr (std::is_unsigned_v<T>) launch_as<S, T>(it, [] __device__(T x) { return x > T(0) ? T(1) : T(0); });
      else launch_as<S, T>(it, [] __device__(T x) { return x > T(0) ? T(1) : x < T(0) ? static_cast<T>(-1) : T(0); });
      return true;
    case UnaryOp::Square: launch_as<S, T>(it, [] __device__(T x) { return static_cast<T>(x * x); }); return true;
    case UnaryOp::Relu:
      launch_as<S, T>(it, [] __device__(T x) { return x > T(0) || dmath::is_nan(x) ? x : T(0); });
      return true;
    default: return false;
  }
}

template <class T, class S = T>
void floating_op(UnaryOp op, const TensorIterator& it) {
  if (common_op<T, S>(op, it)) return;
  using namespace dmath;
  switch (op) {
    case UnaryOp::Floor: return launch_as<S, T>(it, [] __device__(T x) { return dmath::floor(x); });
    case UnaryOp::Ceil: return launch_as<S, T>(it, [] __device__(T x) { return dmath::ceil(x); });
    case UnaryOp::Round: return launch_as<S, T>(it, [] __device__(T x) { return dmath::rint(x); });
    case UnaryOp::Exp: return launch_as<S, T>(it, [] __device__(T x) { return dmath::exp(x); });
    case UnaryOp::Log: return launch_as<S, T>(it, [] __device__(T x) { return dmath::log(x); });
    case UnaryOp::Log1p: return launch_as<S, T>(it, [] __device__(T x) { return dmath::log1p(x); });
    case UnaryOp::Expm1: return launch_as<S, T>(it, [] __device__(T x) { return dmath::expm1(x); });
    case UnaryOp::Sqrt: return launch_as<S, T>(it, [] __device__(T x) { return dmath::sqrt(x); });
    case UnaryOp::Rsqrt: return launch_as<S, T>(it, [] __device__(T x) { return T(1) / dmath::sqrt(x); });
    case UnaryOp::Sin: return launch_as<S, T>(it, [] __device__(T x) { return dmath::sin(x); });
    case UnaryOp::Cos: return launch_as<S, T>(it, [] __device__(T x) { return dmath::cos(x); });
    case UnaryOp::Tanh: return launch_as<S, T>(it, [] __device__(T x) { return dmath::tanh(x); });
    case UnaryOp::Sigmoid: return launch_as<S, T>(it, [] __device__(T x) { return T(1) / (T(1) + dmath::exp(-x)); });
    case UnaryOp::Reciprocal: return launch_as<S, T>(it, [] __device__(T x) { return T(1) / x; });
    case UnaryOp::Erf: return launch_as<S, T>(it, [] __device__(T x) { return dmath::erf(x); });
    case UnaryOp::GeluErf:
      return launch_as<S, T>(it, [] __device__(T x) { return T(0.5) * x * (T(1) + dmath::erf(x * T(kSqrtHalf))); });
    case UnaryOp::GeluTanh:
      return launch_as<S, T>(it, [] __device__(T x) {
        const T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x);
        return T(0.5) * x * (T(1) + dmath::tanh(inner));
      });
    case UnaryOp::Silu: return launch_as<S, T>(it, [] __device__(T x) { return x / (T(1) + dmath::exp(-x)); });
    default: break;
  }
  throw Error("unary: unsupported op for floating dtypes");
}

template <class T>
void integer_op(UnaryOp op, const TensorIterator& it) {
  if (common_op<T>(op, it)) return;
  switch (op) {
    case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round:
      return launch<T, T>(it, [] __device__(T x) { return x; });
    default: break;
  }
  throw TypeError("unary: this op needs a floating point tensor");
}

template <class T>
void unary_typed(UnaryOp op, const TensorIterator& it) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == UnaryOp::Abs || op == UnaryOp::Sign) return launch<bool, bool>(it, [] __device__(bool x) { return x; });
    throw TypeError("unary: this op does not support bool tensors");
  } else if constexpr (std::is_floating_point_v<T>) {
    floating_op<T>(op, it);
  } else {
    integer_op<T>(op, it);
  }
}

template <class T>
__device__ inline T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (e & 1) ? static_cast<T>(-1) : T(1);
    }
    return T(0);
  }
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(static_cast<int64_t>(base));
  for (uint64_t n = static_cast<uint64_t>(e); n; n >>= 1) {
    if (n & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T>
void softplus_typed(const TensorIterator& it, double beta, double threshold) {
  if constexpr (std::is_floating_point_v<T>) {
    const T b = static_cast<T>(beta), th = static_cast<T>(threshold);
    launch<T, T>(it, [b, th] __device__(T x) { return x * b > th ? x : dmath::log1p(dmath::exp(x * b)) / b; });
  } else {
    throw TypeError("softplus: needs a floating point tensor");
  }
}

template <class T>
void clamp_typed(const TensorIterator& it, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  const T l = lo ? lo->to<T>() : T(0);
  const T h = hi ? hi->to<T>() : T(0);
  const bool l_nan = l != l, h_nan = h != h;  // only floating bounds can be NaN
  if (l_nan || h_nan) {
    const T nan = l_nan ? l : h;
    return launch<T, T>(it, [nan] __device__(T) { return nan; });
  }
  if (lo && hi) {
    launch<T, T>(it, [l, h] __device__(T x) { return x < l ? (l > h ? h : l) : x > h ? h : x; });
  } else if (lo) {
    launch<T, T>(it, [l] __device__(T x) { return x < l ? l : x; });
  } else if (hi) {
    launch<T, T>(it, [h] __device__(T x) { return x > h ? h : x; });
  } else {
    launch<T, T>(it, [] __device__(T x) { return x; });
  }
}

template <class T>
__device__ inline T clamp_lower(T x, T l) {
  return dmath::is_nan(x) || dmath::is_nan(l) ? static_cast<T>(x + l) : x < l ? l : x;
}
template <class T>
__device__ inline T clamp_upper(T x, T h) {
  return dmath::is_nan(x) || dmath::is_nan(h) ? static_cast<T>(x + h) : x > h ? h : x;
}

template <class T>
void clamp_tensor_typed(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  if (lo.defined() && hi.defined()) {
    launch<T, T, T, T>(TensorIterator({out, in, lo, hi}),
                       [] __device__(T x, T l, T h) { return clamp_upper(clamp_lower(x, l), h); });
  } else if (lo.defined()) {
    launch<T, T, T>(TensorIterator({out, in, lo}), [] __device__(T x, T l) { return clamp_lower(x, l); });
  } else {
    launch<T, T, T>(TensorIterator({out, in, hi}), [] __device__(T x, T h) { return clamp_upper(x, h); });
  }
}

template <class T>
void pow_scalar_typed(const TensorIterator& it, const Scalar& exponent) {
  if constexpr (std::is_same_v<T, bool>) {
    throw TypeError("pow: bool tensors are not supported");
  } else if constexpr (std::is_floating_point_v<T>) {
    const double e = exponent.to_double();
    if (e == 2.0) return launch<T, T>(it, [] __device__(T x) { return x * x; });
    if (e == 3.0) return launch<T, T>(it, [] __device__(T x) { return x * x * x; });
    if (e == 1.0) return launch<T, T>(it, [] __device__(T x) { return x; });
    if (e == 0.5) return launch<T, T>(it, [] __device__(T x) { return dmath::sqrt(x); });
    if (e == -1.0) return launch<T, T>(it, [] __device__(T x) { return T(1) / x; });
    if (e == -0.5) return launch<T, T>(it, [] __device__(T x) { return T(1) / dmath::sqrt(x); });
    const T te = static_cast<T>(e);
    launch<T, T>(it, [te] __device__(T x) { return dmath::pow(x, te); });
  } else {
    const int64_t e = exponent.to_int();
    launch<T, T>(it, [e] __device__(T x) { return int_pow<T>(x, e); });
  }
}

template <class T>
void pow_typed(const TensorIterator& it) {
  if constexpr (std::is_same_v<T, bool>) {
    throw TypeError("pow: bool tensors are not supported");
  } else if constexpr (std::is_floating_point_v<T>) {
    launch<T, T, T>(it, [] __device__(T x, T e) { return dmath::pow(x, e); });
  } else {
    launch<T, T, T>(it, [] __device__(T x, T e) { return int_pow<T>(x, static_cast<int64_t>(e)); });
  }
}

template <class T>
void nan_to_num_typed(const TensorIterator& it, double nan, double posinf, double neginf) {
  if constexpr (std::is_floating_point_v<T>) {
    const T n = static_cast<T>(nan), p = static_cast<T>(posinf), m = static_cast<T>(neginf);
    const T inf = std::numeric_limits<T>::infinity();
    launch<T, T>(it, [=] __device__(T x) { return x != x ? n : x == inf ? p : x == -inf ? m : x; });
  } else {
    launch<T, T>(it, [] __device__(T x) { return x; });
  }
}

template <class T>
void in_range_mask_typed(const TensorIterator& it, std::optional<double> lo, std::optional<double> hi) {
  if constexpr (std::is_floating_point_v<T>) {
    const T l = lo ? static_cast<T>(*lo) : -std::numeric_limits<T>::infinity();
    const T h = hi ? static_cast<T>(*hi) : std::numeric_limits<T>::infinity();
    launch<T, T>(it, [l, h] __device__(T x) { return x >= l && x <= h ? T(1) : T(0); });
  } else {
    throw TypeError("in_range_mask: needs a floating point tensor");
  }
}

template <class T>
void isfinite_mask_typed(const TensorIterator& it) {
  if constexpr (std::is_floating_point_v<T>) {
    launch<T, T>(it, [] __device__(T x) { return x - x == T(0) ? T(1) : T(0); });
  } else {
    throw TypeError("isfinite_mask: needs a floating point tensor");
  }
}

template <class T>
void keep_where_typed(const TensorIterator& it) {
  launch<T, T, T>(it, [] __device__(T v, T k) { return k != T(0) ? v : T(0); });
}

// Runs `call` with T the C++ type of `dtype` (a math dtype).
#define EMBER_CUDA_DISPATCH_MATH(dtype, name, call)      \
  dispatch_math(dtype, name, [&](auto tag) {             \
    using T = typename decltype(tag)::type;              \
    call;                                                \
  })

}  // namespace

Tensor on_device_of(const Tensor& t, const Tensor& like) {
  if (!t.defined() || t.device() == like.device()) return t;
  if (t.device().is_cpu() && t.dim() == 0) {
    // A number (x * 2): a fill kernel takes it as an argument, with no
    // synchronizing host-to-device copy.
    Tensor d = empty({}, t.dtype(), like.device());
    fill(d, t.item());
    return d;
  }
  return t.to(like.device());
}

void unary(UnaryOp op, Tensor& out, const Tensor& in) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  if (out.dtype() == DType::Float16) return floating_op<float, __half>(op, it);
  if (out.dtype() == DType::BFloat16) return floating_op<float, __nv_bfloat16>(op, it);
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "unary", unary_typed<T>(op, it));
}

void softplus(Tensor& out, const Tensor& in, double beta, double threshold) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "softplus", softplus_typed<T>(it, beta, threshold));
}

void clamp(Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "clamp", clamp_typed<T>(it, lo, hi));
}

void clamp_tensor(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out), l = on_device_of(lo, out), h = on_device_of(hi, out);
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "clamp", clamp_tensor_typed<T>(out, x, l, h));
}

void pow_scalar(Tensor& out, const Tensor& in, const Scalar& exponent) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "pow", pow_scalar_typed<T>(it, exponent));
}

void pow(Tensor& out, const Tensor& base, const Tensor& exponent) {
  DeviceGuard guard(out.device().index);
  const Tensor b = on_device_of(base, out), e = on_device_of(exponent, out);
  TensorIterator it({out, b, e});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "pow", pow_typed<T>(it));
}

void nan_to_num(Tensor& out, const Tensor& in, double nan, double posinf, double neginf) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "nan_to_num", nan_to_num_typed<T>(it, nan, posinf, neginf));
}

void in_range_mask(Tensor& out, const Tensor& in, std::optional<double> lo, std::optional<double> hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "in_range_mask", in_range_mask_typed<T>(it, lo, hi));
}

void isfinite_mask(Tensor& out, const Tensor& in) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "isfinite_mask", isfinite_mask_typed<T>(it));
}

void keep_where(Tensor& out, const Tensor& value, const Tensor& keep) {
  DeviceGuard guard(out.device().index);
  const Tensor v = on_device_of(value, out), k = on_device_of(keep, out);
  TensorIterator it({out, v, k});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "keep_where", keep_where_typed<T>(it));
}

}  // namespace ember::cuda
