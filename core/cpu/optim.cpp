// CPU kernels of the optim family. Each update is one loop over a tensor's
// elements that reads and writes every buffer once, with no temporaries. The
// loops are free functions over __restrict pointers (a lambda capturing the
// pointers by reference reloads them after every store and does not
// vectorize), templated on the options that add or drop a buffer so that
// each variant is a straight-line, vectorizable body.
#include <ember/core/cpu/optim.h>

#include <algorithm>
#include <cmath>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {
namespace {

template <class T>
T* ptr(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

// The gradient as the update sees it: negated for maximize, plus L2 decay.
template <class T>
inline T effective_grad(T g, T p, T sign, T wd) {
  const T d = sign * g;
  return wd != 0 ? d + wd * p : d;
}

// ---- SGD

template <class T>
struct SgdScalars { T lr, wd, momentum, keep, sign; };

template <class T, bool kMomentum, bool kInit, bool kNesterov>
void sgd_loop(T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t b, int64_t e, SgdScalars<T> s) {
  for (int64_t k = b; k < e; ++k) {
    T d = effective_grad(g[k], p[k], s.sign, s.wd);
    if constexpr (kMomentum) {
      const T m = kInit ? d : s.momentum * buf[k] + s.keep * d;
      buf[k] = m;
      d = kNesterov ? d + s.momentum * m : m;
    }
    p[k] -= s.lr * d;
  }
}

template <class T, bool kMomentum, bool kInit>
void sgd_range(T* p, const T* g, T* buf, int64_t b, int64_t e, SgdScalars<T> s, bool nesterov) {
  if (nesterov) sgd_loop<T, kMomentum, kInit, true>(p, g, buf, b, e, s);
  else sgd_loop<T, kMomentum, kInit, false>(p, g, buf, b, e, s);
}

// ---- Adam / AdamW

template <class T>
struct AdamScalars { T step_size, inv_bc2_sqrt, sign, l2, shrink, w1, b2, w2, eps; };

template <class T, bool kAmsgrad>
void adam_loop(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, T* __restrict vmax,
               int64_t b, int64_t e, AdamScalars<T> s) {
  for (int64_t k = b; k < e; ++k) {
    const T pk = p[k] * s.shrink;
    const T grad = effective_grad(g[k], pk, s.sign, s.l2);
    const T mk = m[k] + s.w1 * (grad - m[k]);
    const T vk = s.b2 * v[k] + s.w2 * grad * grad;
    m[k] = mk;
    v[k] = vk;
    T second = vk;
    if constexpr (kAmsgrad) {
      second = std::max(vmax[k], vk);
      vmax[k] = second;
    }
    const T denom = std::sqrt(second) * s.inv_bc2_sqrt + s.eps;
    p[k] = pk - s.step_size * (mk / denom);
  }
}

// ---- RMSprop

template <class T>
struct RmspropScalars { T sign, wd, alpha, w, eps, lr, momentum; };

template <class T, bool kCentered, bool kMomentum>
void rmsprop_loop(T* __restrict p, const T* __restrict g, T* __restrict sq, T* __restrict ga,
                  T* __restrict buf, int64_t b, int64_t e, RmspropScalars<T> s) {
  for (int64_t k = b; k < e; ++k) {
    const T grad = effective_grad(g[k], p[k], s.sign, s.wd);
    const T avg_sq = s.alpha * sq[k] + s.w * grad * grad;
    sq[k] = avg_sq;
    T var = avg_sq;
    if constexpr (kCentered) {
      const T a = ga[k] + s.w * (grad - ga[k]);
      ga[k] = a;
      var = avg_sq - a * a;
    }
    const T step = grad / (std::sqrt(var) + s.eps);
    if constexpr (kMomentum) {
      const T mk = s.momentum * buf[k] + step;
      buf[k] = mk;
      p[k] -= s.lr * mk;
    } else {
      p[k] -= s.lr * step;
    }
  }
}

// ---- Adagrad

template <class T>
void adagrad_loop(T* __restrict p, const T* __restrict g, T* __restrict sum, int64_t b, int64_t e, T clr,
                  T sign, T wd, T eps) {
  for (int64_t k = b; k < e; ++k) {
    const T grad = effective_grad(g[k], p[k], sign, wd);
    const T acc = sum[k] + grad * grad;
    sum[k] = acc;
    p[k] -= clr * (grad / (std::sqrt(acc) + eps));
  }
}

// Splits [0, n) across threads when the tensor is large.
template <class F>
void for_elements(int64_t n, const F& f) {
  parallel_for(0, n, kElementwiseGrain, f);
}

}  // namespace

void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& init_buffer,
         const SgdOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_floating(params[i].dtype(), "sgd", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* buf = o.momentum != 0 ? ptr<T>(momentum_buffers[i]) : nullptr;
      const SgdScalars<T> s{T(o.lr), T(o.weight_decay), T(o.momentum), T(1 - o.dampening),
                            o.maximize ? T(-1) : T(1)};
      const bool init = buf && init_buffer[i];
      const bool nesterov = o.nesterov;
      for_elements(params[i].numel(), [=](int64_t b, int64_t e) {
        if (!buf) sgd_range<T, false, false>(p, g, buf, b, e, s, false);
        else if (init) sgd_range<T, true, true>(p, g, buf, b, e, s, nesterov);
        else sgd_range<T, true, false>(p, g, buf, b, e, s, nesterov);
      });
    });
  }
}

void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
          const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step,
          const AdamOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_floating(params[i].dtype(), o.decoupled_weight_decay ? "adamw" : "adam", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* m = ptr<T>(exp_avgs[i]);
      T* v = ptr<T>(exp_avg_sqs[i]);
      T* vmax = o.amsgrad ? ptr<T>(max_exp_avg_sqs[i]) : nullptr;
      // Bias corrections depend on this parameter's own step count.
      const double bc1 = 1 - std::pow(o.beta1, step[i]);
      const double bc2 = 1 - std::pow(o.beta2, step[i]);
      const bool decoupled = o.decoupled_weight_decay;
      const AdamScalars<T> s{T(o.lr / bc1), T(1 / std::sqrt(bc2)), o.maximize ? T(-1) : T(1),
                             decoupled ? T(0) : T(o.weight_decay), decoupled ? T(1 - o.lr * o.weight_decay) : T(1),
                             T(1 - o.beta1), T(o.beta2), T(1 - o.beta2), T(o.eps)};
      for_elements(params[i].numel(), [=](int64_t b, int64_t e) {
        if (vmax) adam_loop<T, true>(p, g, m, v, vmax, b, e, s);
        else adam_loop<T, false>(p, g, m, v, vmax, b, e, s);
      });
    });
  }
}

void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
             const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_floating(params[i].dtype(), "rmsprop", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* sq = ptr<T>(square_avgs[i]);
      T* ga = o.centered ? ptr<T>(grad_avgs[i]) : nullptr;
      T* buf = o.momentum > 0 ? ptr<T>(momentum_buffers[i]) : nullptr;
      const RmspropScalars<T> s{o.maximize ? T(-1) : T(1), T(o.weight_decay), T(o.alpha), T(1 - o.alpha),
                                T(o.eps), T(o.lr), T(o.momentum)};
      for_elements(params[i].numel(), [=](int64_t b, int64_t e) {
        if (ga && buf) rmsprop_loop<T, true, true>(p, g, sq, ga, buf, b, e, s);
        else if (ga) rmsprop_loop<T, true, false>(p, g, sq, ga, buf, b, e, s);
        else if (buf) rmsprop_loop<T, false, true>(p, g, sq, ga, buf, b, e, s);
        else rmsprop_loop<T, false, false>(p, g, sq, ga, buf, b, e, s);
      });
    });
  }
}

void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& state_sums, const std::vector<double>& step,
             const AdagradOptions& o) {
  for (size_t i = 0; i < params.size(); ++i) {
    dispatch_floating(params[i].dtype(), "adagrad", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = ptr<T>(params[i]);
      const T* g = ptr<T>(grads[i]);
      T* sum = ptr<T>(state_sums[i]);
      const T clr = T(o.lr / (1 + (step[i] - 1) * o.lr_decay));
      const T sign = o.maximize ? T(-1) : T(1), wd = T(o.weight_decay), eps = T(o.eps);
      for_elements(params[i].numel(), [=](int64_t b, int64_t e) {
        adagrad_loop(p, g, sum, b, e, clr, sign, wd, eps);
      });
    });
  }
}

}  // namespace ember::cpu
