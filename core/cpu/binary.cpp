#include <ember/core/cpu/binary.h>

#include <cmath>

#include <ember/core/cpu/loops.h>

namespace ember::cpu {

namespace {

template <class T>
void arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  switch (op) {
    case BinaryOp::Add: {
      const T s = alpha.to<T>();
      if (s == T(1)) return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a + b); });
      return map<T, T, T>(it, [s](T a, T b) { return static_cast<T>(a + s * b); });
    }
    case BinaryOp::Sub: {
      const T s = alpha.to<T>();
      if (s == T(1)) return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a - b); });
      return map<T, T, T>(it, [s](T a, T b) { return static_cast<T>(a - s * b); });
    }
    case BinaryOp::Mul: return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a * b); });
    case BinaryOp::Div: return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a / b); });
    default: break;
  }
  throw Error("binary: unsupported op for this dtype");
}

}  // namespace

void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  TensorIterator it({out, a, b});
  dispatch_math(out.dtype(), "binary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("binary: arithmetic on bool tensors is not supported");
    } else {
      arithmetic<T>(op, it, alpha);
    }
  });
}

}  // namespace ember::cpu
