// ctc_loss's recursion: alpha forward over the frames, beta backward, both
// in log space, one sample per task. The gradient of frame t accumulates
// alpha + beta per class (several extended positions share a label) and is
// written for the labels the sample uses; the rest of the row is zero.
#include <ember/core/cpu/ctc.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {

template <class T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

// log(exp(a) + exp(b)), -inf when both are.
template <class T>
inline T log_add(T a, T b) {
  if (a < b) std::swap(a, b);
  return b == kNegInf<T> ? a : a + std::log1p(std::exp(b - a));
}

// Where extended position s may come from two places back: a label (not a
// blank) that differs from the label before it.
inline bool can_skip(const int64_t* ext, int64_t s, int64_t blank) {
  return s >= 2 && ext[s] != blank && ext[s] != ext[s - 2];
}

struct Shape {
  int64_t T, N, C, S;  // frames, samples, classes, extended positions (of the longest target)
};

template <class T>
void forward_sample(const Shape& d, int64_t n, T* nll, T* la, const T* lp, const int64_t* ext, int64_t frames,
                    int64_t labels, int64_t blank) {
  const int64_t S = 2 * labels + 1;
  if (frames == 0) {
    nll[n] = labels == 0 ? T(0) : std::numeric_limits<T>::infinity();
    return;
  }
  auto alpha = [&](int64_t t) { return la + (t * d.N + n) * d.S; };
  auto emit = [&](int64_t t, int64_t s) { return lp[(t * d.N + n) * d.C + ext[s]]; };
  T* a0 = alpha(0);
  std::fill(a0, a0 + S, kNegInf<T>);
  a0[0] = emit(0, 0);
  if (S > 1) a0[1] = emit(0, 1);
  for (int64_t t = 1; t < frames; ++t) {
    const T* prev = alpha(t - 1);
    T* cur = alpha(t);
    for (int64_t s = 0; s < S; ++s) {
      T v = prev[s];
      if (s >= 1) v = log_add(v, prev[s - 1]);
      if (can_skip(ext, s, blank)) v = log_add(v, prev[s - 2]);
      cur[s] = v == kNegInf<T> ? v : v + emit(t, s);
    }
  }
  const T* last = alpha(frames - 1);
  nll[n] = -(S > 1 ? log_add(last[S - 1], last[S - 2]) : last[0]);
}

template <class T>
void backward_sample(const Shape& d, int64_t n, T* grad, T g, T nll, const T* la, const T* lp, const int64_t* ext,
                     int64_t frames, int64_t labels, int64_t blank) {
  for (int64_t t = 0; t < d.T; ++t) std::fill_n(grad + (t * d.N + n) * d.C, d.C, T(0));
  if (frames == 0 || std::isinf(nll) || g == T(0)) return;  // impossible: no gradient (as the composite path)
  const int64_t S = 2 * labels + 1;
  std::vector<T> beta(static_cast<size_t>(S)), next(static_cast<size_t>(S));
  std::vector<T> per_class(static_cast<size_t>(d.C), kNegInf<T>);
  for (int64_t t = frames - 1; t >= 0; --t) {
    const T* lpt = lp + (t * d.N + n) * d.C;
    if (t == frames - 1) {
      std::fill(beta.begin(), beta.end(), kNegInf<T>);
      beta[S - 1] = lpt[ext[S - 1]];
      if (S > 1) beta[S - 2] = lpt[ext[S - 2]];
    } else {
      for (int64_t s = 0; s < S; ++s) {
        T v = next[s];
        if (s + 1 < S) v = log_add(v, next[s + 1]);
        if (s + 2 < S && can_skip(ext, s + 2, blank)) v = log_add(v, next[s + 2]);
        beta[s] = v == kNegInf<T> ? v : v + lpt[ext[s]];
      }
    }
    // Frame t's gradient: -g exp(logsumexp over s with label c of (alpha + beta) - lp[t, c] + nll).
    const T* at = la + (t * d.N + n) * d.S;
    for (int64_t s = 0; s < S; ++s) per_class[ext[s]] = kNegInf<T>;
    for (int64_t s = 0; s < S; ++s) per_class[ext[s]] = log_add(per_class[ext[s]], at[s] + beta[s]);
    T* gt = grad + (t * d.N + n) * d.C;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t c = ext[s];
      const T both = per_class[c];
      gt[c] = both == kNegInf<T> ? T(0) : -g * std::exp(both - lpt[c] + nll);
    }
    std::swap(beta, next);
  }
}

Shape shape_of(const Tensor& log_probs, const Tensor& extended) {
  return {log_probs.size(0), log_probs.size(1), log_probs.size(2), extended.size(1)};
}

}  // namespace

void ctc_forward(Tensor& nll, Tensor& log_alpha, const Tensor& log_probs, const Tensor& extended,
                 const int64_t* input_lengths, const int64_t* target_lengths, int64_t blank) {
  const Shape d = shape_of(log_probs, extended);
  dispatch_floating(log_probs.dtype(), "ctc_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = nll.data<T>();
    T* la = log_alpha.data<T>();
    const T* lp = log_probs.data<T>();
    const int64_t* ext = extended.data<int64_t>();
    parallel_for(0, d.N, 1, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        forward_sample(d, n, out, la, lp, ext + n * d.S, input_lengths[n], target_lengths[n], blank);
      }
    });
  });
}

void ctc_backward(Tensor& grad, const Tensor& grad_nll, const Tensor& nll, const Tensor& log_alpha,
                  const Tensor& log_probs, const Tensor& extended, const int64_t* input_lengths,
                  const int64_t* target_lengths, int64_t blank) {
  const Shape d = shape_of(log_probs, extended);
  dispatch_floating(log_probs.dtype(), "ctc_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* gp = grad.data<T>();
    const T* gn = grad_nll.data<T>();
    const T* loss = nll.data<T>();
    const T* la = log_alpha.data<T>();
    const T* lp = log_probs.data<T>();
    const int64_t* ext = extended.data<int64_t>();
    parallel_for(0, d.N, 1, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        backward_sample(d, n, gp, gn[n], loss[n], la, lp, ext + n * d.S, input_lengths[n], target_lengths[n],
                        blank);
      }
    });
  });
}

}  // namespace ember::cpu
