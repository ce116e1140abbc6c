#include <ember/core/ops/factory.h>

#include <cmath>

#include <ember/core/cpu/factory.h>
#include <ember/core/error.h>
#include <ember/core/scalar_fits.h>

namespace ember {

void check_size_nonnegative(const Shape& shape, const char* op) {
  for (auto s : shape) {
    EMBER_CHECK(s >= 0, Error, op, ": trying to create tensor with negative dimension ", s, ": ", shape_str(shape));
  }
}

namespace {
Tensor filled(const Shape& shape, const Scalar& value, DType dtype, Device device, const char* op) {
  check_size_nonnegative(shape, op);
  Tensor t = empty(shape, dtype, device);
  t.fill_(value);
  return t;
}
}  // namespace

Tensor zeros(const Shape& shape, DType dtype, Device device) { return filled(shape, 0, dtype, device, "zeros"); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return filled(shape, 1, dtype, device, "ones"); }

Tensor full(const Shape& shape, const Scalar& value, std::optional<DType> dtype, Device device) {
  check_size_nonnegative(shape, "full");
  const DType dt = dtype.value_or(value.default_dtype());
  check_scalar_fits(value, dt, "full");
  Tensor t = empty(shape, dt, device);
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
  EMBER_CHECK(st != 0, Error, "arange: step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), Error, "arange: unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), Error,
              "arange: upper bound and larger bound inconsistent with step sign (start ", s, ", end ", e,
              ", step ", st, ")");
  const bool all_int = !start.is_floating() && !end.is_floating() && !step.is_floating();
  const DType dt = dtype.value_or(all_int ? DType::Int64 : default_float_dtype());
  const bool exact = all_int && !is_floating(dt);
  double size = std::ceil((e - s) / st);
  if (exact) {  // integer ceil division, exact beyond 2^53
    const int64_t is = start.to_int(), ie = end.to_int(), ist = step.to_int();
    // The check above in doubles cannot tell 2**62 from 2**62 + 1.
    EMBER_CHECK((ist > 0 && ie >= is) || (ist < 0 && ie <= is), Error,
                "arange: upper bound and larger bound inconsistent with step sign (start ", is, ", end ", ie,
                ", step ", ist, ")");
    // The distance and the step's magnitude in uint64_t: end - start may not
    // fit in int64_t (arange(-2**63, 2**63 - 1, 2**62)), and -step may not either.
    const uint64_t dist = ist > 0 ? static_cast<uint64_t>(ie) - static_cast<uint64_t>(is)
                                  : static_cast<uint64_t>(is) - static_cast<uint64_t>(ie);
    const uint64_t stride = ist > 0 ? static_cast<uint64_t>(ist) : uint64_t{0} - static_cast<uint64_t>(ist);
    size = static_cast<double>(dist / stride + (dist % stride != 0 ? 1 : 0));
  }
  EMBER_CHECK(size < 9.2e18, Error, "arange: invalid size, possible overflow (start ", s, ", end ", e, ", step ",
              st, ")");
  const int64_t n = static_cast<int64_t>(size);
  // Other devices get the CPU's values copied over (one small transfer).
  Tensor t = empty({n}, dt, kCPU);
  if (exact) {
    cpu::arange_int(t, start.to_int(), step.to_int());  // exact beyond 2^53
  } else {
    cpu::arange(t, s, st);
  }
  return device.is_cpu() ? t : t.to(device);
}

Tensor linspace(double start, double end, int64_t steps, std::optional<DType> dtype, Device device) {
  EMBER_CHECK(steps >= 0, Error, "linspace: number of steps must be non-negative, got ", steps);
  Tensor t = empty({steps}, dtype.value_or(default_float_dtype()), kCPU);
  cpu::linspace(t, start, end);
  return device.is_cpu() ? t : t.to(device);
}

Tensor eye(int64_t n, std::optional<int64_t> m, DType dtype, Device device) {
  const int64_t cols = m.value_or(n);
  EMBER_CHECK(n >= 0, Error, "eye: n must be greater or equal to 0, got ", n);
  EMBER_CHECK(cols >= 0, Error, "eye: m must be greater or equal to 0, got ", cols);
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
