// A Python-like number: bool, integer or floating, as passed to ops such as
// `x + 1` or `x.fill_(0.5)`.
#pragma once
#include <cstdint>

#include <ember/core/dtype.h>

namespace ember {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float };
  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  Scalar(int v) : kind_(Kind::Int), i_(v) {}
  Scalar(int64_t v) : kind_(Kind::Int), i_(v) {}
  Scalar(long long v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  Scalar(double v) : kind_(Kind::Float), d_(v) {}
  Scalar(float v) : kind_(Kind::Float), d_(v) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0; }

  // The value converted to the C++ element type T.
  template <class T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_int());
    else return static_cast<T>(to_double());
  }

  // The dtype a tensor made from this scalar alone would have.
  DType default_dtype() const {
    return kind_ == Kind::Float ? default_float_dtype() : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }

 private:
  Kind kind_;
  union { int64_t i_; double d_; };
};

// Result dtype of `tensor op scalar`, PyTorch's rule: the scalar raises the
// tensor's dtype only when it is of a higher category (bool < int < float).
inline DType promote_with_scalar(DType t, const Scalar& s) {
  if (s.is_floating() && !is_floating(t)) return default_float_dtype();
  if (s.is_integral() && t == DType::Bool) return DType::Int64;
  return t;
}

}  // namespace ember
