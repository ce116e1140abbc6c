#include <ember/core/ops/factory.h>

#include <cmath>

#include <ember/core/cpu/factory.h>
#include <ember/core/error.h>

namespace ember {

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1, dtype, device); }

Tensor full(const Shape& shape, const Scalar& value, std::optional<DType> dtype, Device device) {
  Tensor t = empty(shape, dtype.value_or(value.default_dtype()), device);
  t.fill_(value);
  return t;
}

Tensor empty_like(const Tensor& t, std::optional<DType> dtype) {
  return empty(t.shape(), dtype.value_or(t.dtype()), t.device());
}
Tensor zeros_like(const Tensor& t, std::optional<DType> dtype) {
  return zeros(t.shape(), dtype.value_or(t.dtype()), t.device());
}
Tensor ones_like(const Tensor& t, std::optional<DType> dtype) {
  return ones(t.shape(), dtype.value_or(t.dtype()), t.device());
}
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<DType> dtype) {
  return full(t.shape(), value, dtype.value_or(t.dtype()), t.device());
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype,
              Device device) {
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0, ValueError, "arange: step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), ValueError, "arange: unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), ValueError,
              "arange: upper bound and larger bound inconsistent with step sign (start ", s, ", end ", e,
              ", step ", st, ")");
  const bool all_int = !start.is_floating() && !end.is_floating() && !step.is_floating();
  const DType dt = dtype.value_or(all_int ? DType::Int64 : default_float_dtype());
  const int64_t n = static_cast<int64_t>(std::ceil((e - s) / st));
  EMBER_CHECK(device.is_cpu(), NotImplementedError, "arange: only the CPU is supported in this build");
  Tensor t = empty({n}, dt, device);
  cpu::arange(t, s, st);
  return t;
}

Tensor linspace(double start, double end, int64_t steps, std::optional<DType> dtype, Device device) {
  EMBER_CHECK(steps >= 0, ValueError, "linspace: number of steps must be non-negative, got ", steps);
  EMBER_CHECK(device.is_cpu(), NotImplementedError, "linspace: only the CPU is supported in this build");
  Tensor t = empty({steps}, dtype.value_or(default_float_dtype()), device);
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  cpu::linspace(t, start, end, step);
  return t;
}

Tensor eye(int64_t n, std::optional<int64_t> m, DType dtype, Device device) {
  const int64_t cols = m.value_or(n);
  EMBER_CHECK(n >= 0 && cols >= 0, ValueError, "eye: n and m must be non-negative, got ", n, " and ", cols);
  Tensor t = zeros({n, cols}, dtype, device);
  // The diagonal is a strided view with step cols + 1.
  const int64_t k = std::min(n, cols);
  if (k > 0) make_view(t, {k}, {cols + 1}, 0).fill_(1);
  return t;
}

}  // namespace ember

namespace ember {

Tensor scalar_tensor(const Scalar& value, DType dtype, Device device) {
  Tensor t = full({}, value, dtype, device);
  t.impl()->wrapped_number = true;
  return t;
}

Tensor scalar_tensor(const Scalar& value, Device device) {
  const DType dt = value.is_floating() ? DType::Float64 : value.is_bool() ? DType::Bool : DType::Int64;
  return scalar_tensor(value, dt, device);
}

}  // namespace ember
