#include <ember/core/scalar_fits.h>

#include <cmath>
#include <limits>
#include <sstream>

#include <ember/core/error.h>

namespace ember {

namespace {

struct IntRange {
  double lowest, max;
  bool is_unsigned;
};

IntRange range_of(DType dtype) {
  switch (dtype) {
    case DType::UInt8: return {0.0, 255.0, true};
    case DType::Int8: return {-128.0, 127.0, false};
    case DType::Int32: return {-2147483648.0, 2147483647.0, false};
    default: return {-9223372036854775808.0, 9223372036854775807.0, false};
  }
}

}  // namespace

bool scalar_fits(const Scalar& value, DType dtype) {
  if (!is_integral(dtype) || value.is_bool()) return true;
  const IntRange r = range_of(dtype);
  if (value.is_integral()) {
    const int64_t v = value.to_int();
    if (dtype == DType::Int64) return true;
    const double d = static_cast<double>(v);  // exact for every value these ranges hold
    return d <= r.max && (d >= r.lowest || (r.is_unsigned && d >= -r.max));
  }
  const double t = std::trunc(value.to_double());  // NaN stays NaN and fails both tests
  // `t < max + 1`: int64's max rounds to 2^63 as a double, which is already out.
  const double above = dtype == DType::Int64 ? r.max : r.max + 1.0;
  return t >= r.lowest && t < above;
}

void check_scalar_fits(const Scalar& value, DType dtype, const char* op) {
  if (scalar_fits(value, dtype)) return;
  std::ostringstream v;
  if (value.is_floating()) v << value.to_double();
  else v << value.to_int();
  throw Error(str(op, ": value ", v.str(), " cannot be converted to type ", dtype_name(dtype),
                  " without overflow"));
}

}  // namespace ember
