// Fused dropout on the CPU: one pass draws each element's keep bit from the
// Philox stream and writes the output and the bool mask; its backward is one
// pass of grad * (mask ? scale : 0). Layout and formulas: core/cpu/nn_misc.h.
#include <ember/core/cpu/nn_misc.h>

#include <type_traits>

#include <ember/core/cpu/loops.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>
#include <ember/core/tensor_iterator.h>

namespace ember::cpu {

namespace {

// Counter blocks per parallel chunk: each block is 4 elements and a Philox
// evaluation, far more work than an elementwise op's element.
constexpr int64_t kGrainBlocks = 4096;

// Calls f(TypeTag<T>{}) for the four floating dtypes; the half types are
// computed in float per element (storage-only types on the CPU).
template <class F>
void dispatch_dropout(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    case DType::Float16: return f(TypeTag<Half>{});
    case DType::BFloat16: return f(TypeTag<BFloat16>{});
    default: break;
  }
  throw Error(str(op, ": expected a floating point tensor, got ", dtype_name(t)));
}

template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

}  // namespace

void native_dropout(Tensor& out, Tensor& mask, const Tensor& input, uint64_t threshold, double scale,
                    const PhiloxStream& s) {
  dispatch_dropout(input.dtype(), "native_dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = input.data<T>();
    T* y = out.data<T>();
    bool* m = mask.data<bool>();
    const int64_t n = input.numel();
    const C kept_scale = static_cast<C>(scale);
    parallel_for(0, (n + 3) / 4, kGrainBlocks, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        const auto w = s.block(static_cast<uint64_t>(j));
        for (int q = 0; q < 4; ++q) {
          const int64_t i = j * 4 + q;
          if (i >= n) break;
          const bool keep = w[q] < threshold;
          y[i] = T(static_cast<C>(x[i]) * (keep ? kept_scale : C(0)));
          m[i] = keep;
        }
      }
    });
  });
}

void native_dropout_backward(Tensor& grad_input, const Tensor& grad, const Tensor& mask, double scale) {
  const TensorIterator iter({grad_input, grad, mask});
  dispatch_dropout(grad.dtype(), "native_dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C kept_scale = static_cast<C>(scale);
    map<T, T, bool>(iter, [kept_scale](T g, bool keep) { return T(static_cast<C>(g) * (keep ? kept_scale : C(0))); });
  });
}

}  // namespace ember::cpu
