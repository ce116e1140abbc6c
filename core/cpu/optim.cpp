// CPU kernels of the optim family. Each update is one loop over a tensor's
// elements that reads and writes every buffer once, with no temporaries; the
// options are loop-invariant, so the compiler unswitches and vectorizes.
#include <ember/core/cpu/optim.h>

#include <algorithm>
#include <cmath>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {
namespace {

// Runs body(TypeTag<T>) for the dtype of `t` (float32 or float64 only).
template <class F>
void dispatch_float(const Tensor& t, const char* op, F&& body) {
  switch (t.dtype()) {
    case DType::Float32: return body(TypeTag<float>{});
    case DType::Float64: return body(TypeTag<double>{});
    default: throw TypeError(str(op, ": no CPU kernel for dtype ", dtype_name(t.dtype())));
  }
}

// Splits [0, n) across threads when the tensor is large.
template <class F>
void for_elements(int64_t n, const F& f) {
  parallel_for(0, n, kElementwiseGrain, f);
}

template <class T>
T* ptr(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

}  // namespace

void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& init_buffer,
         const SgdOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_float(params[i], "sgd", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* buf = o.momentum != 0 ? ptr<T>(momentum_buffers[i]) : nullptr;
      const bool init = o.momentum != 0 && init_buffer[i];
      const T lr = T(o.lr), wd = T(o.weight_decay), mom = T(o.momentum), keep = T(1 - o.dampening);
      const T sign = o.maximize ? T(-1) : T(1);
      const bool nesterov = o.nesterov;
      for_elements(params[i].numel(), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          T d = sign * g[k];
          if (wd != 0) d += wd * p[k];
          if (buf) {
            const T m = init ? d : mom * buf[k] + keep * d;
            buf[k] = m;
            d = nesterov ? d + mom * m : m;
          }
          p[k] -= lr * d;
        }
      });
    });
  }
}

void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
          const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step,
          const AdamOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_float(params[i], o.decoupled_weight_decay ? "adamw" : "adam", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* m = ptr<T>(exp_avgs[i]);
      T* v = ptr<T>(exp_avg_sqs[i]);
      T* vmax = o.amsgrad ? ptr<T>(max_exp_avg_sqs[i]) : nullptr;
      // Bias corrections depend on this parameter's own step count.
      const double bc1 = 1 - std::pow(o.beta1, step[i]);
      const double bc2 = 1 - std::pow(o.beta2, step[i]);
      const T step_size = T(o.lr / bc1), inv_bc2_sqrt = T(1 / std::sqrt(bc2));
      const T sign = o.maximize ? T(-1) : T(1);
      const T l2 = o.decoupled_weight_decay ? T(0) : T(o.weight_decay);
      const T shrink = o.decoupled_weight_decay ? T(1 - o.lr * o.weight_decay) : T(1);
      const T w1 = T(1 - o.beta1), b2 = T(o.beta2), w2 = T(1 - o.beta2), eps = T(o.eps);
      for_elements(params[i].numel(), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          const T pk = p[k] * shrink;
          T grad = sign * g[k];
          if (l2 != 0) grad += l2 * pk;
          const T mk = m[k] + w1 * (grad - m[k]);
          const T vk = b2 * v[k] + w2 * grad * grad;
          m[k] = mk;
          v[k] = vk;
          T second = vk;
          if (vmax) {
            second = std::max(vmax[k], vk);
            vmax[k] = second;
          }
          const T denom = std::sqrt(second) * inv_bc2_sqrt + eps;
          p[k] = pk - step_size * (mk / denom);
        }
      });
    });
  }
}

void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
             const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_float(params[i], "rmsprop", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* sq = ptr<T>(square_avgs[i]);
      T* ga = o.centered ? ptr<T>(grad_avgs[i]) : nullptr;
      T* buf = o.momentum > 0 ? ptr<T>(momentum_buffers[i]) : nullptr;
      const T sign = o.maximize ? T(-1) : T(1);
      const T wd = T(o.weight_decay), alpha = T(o.alpha), w = T(1 - o.alpha);
      const T eps = T(o.eps), lr = T(o.lr), mom = T(o.momentum);
      for_elements(params[i].numel(), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          T grad = sign * g[k];
          if (wd != 0) grad += wd * p[k];
          const T s = alpha * sq[k] + w * grad * grad;
          sq[k] = s;
          T var = s;
          if (ga) {
            const T a = ga[k] + w * (grad - ga[k]);
            ga[k] = a;
            var = s - a * a;
          }
          const T step = grad / (std::sqrt(var) + eps);
          if (buf) {
            const T m = mom * buf[k] + step;
            buf[k] = m;
            p[k] -= lr * m;
          } else {
            p[k] -= lr * step;
          }
        }
      });
    });
  }
}

void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& state_sums, const std::vector<double>& step,
             const AdagradOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_float(params[i], "adagrad", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* sum = ptr<T>(state_sums[i]);
      const T clr = T(o.lr / (1 + (step[i] - 1) * o.lr_decay));
      const T sign = o.maximize ? T(-1) : T(1);
      const T wd = T(o.weight_decay), eps = T(o.eps);
      for_elements(params[i].numel(), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          T grad = sign * g[k];
          if (wd != 0) grad += wd * p[k];
          const T s = sum[k] + grad * grad;
          sum[k] = s;
          p[k] -= clr * (grad / (std::sqrt(s) + eps));
        }
      });
    });
  }
}

}  // namespace ember::cpu
