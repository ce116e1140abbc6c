// Whether a Python number fits a dtype, PyTorch's rule for fills and
// factories: `full((2,), 300, dtype=uint8)` raises instead of wrapping to 44.
#pragma once
#include <ember/core/scalar.h>

namespace ember {

// Integer dtypes take values within their range after truncation toward zero
// (unsigned ones also take -max..-1, which wrap as two's complement, when the
// value is an integer); NaN and infinities fit none of them. Bool, floating
// and complex dtypes take any value (floating ones round to inf).
bool scalar_fits(const Scalar& value, DType dtype);
// Raises Error "op: value v cannot be converted to type t without overflow".
void check_scalar_fits(const Scalar& value, DType dtype, const char* op);

}  // namespace ember
