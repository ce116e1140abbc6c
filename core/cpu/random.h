// CPU kernels of the random family. Each fills a contiguous tensor from a
// reserved PhiloxStream; element i takes its words from counter blocks fixed
// by i alone, so threads do not change the result. The stream layout a CUDA
// kernel must follow to reproduce these numbers (word w = block(w / 4)[w % 4]):
//   uniform, exponential, randint/random_: element i uses words [i*k, (i+1)*k);
//     k = 2 for float64 (53 bits: (w0 << 32 | w1) >> 11) and for integer
//     ranges above 2^32 (w0 << 32 | w1), else k = 1 (float: w0 >> 8, 24 bits).
//   normal: pair p = (2p, 2p+1) uses words [2p*k, 2(p+1)*k) as u1, u2;
//     element 2p = r cos(2 pi u2), 2p+1 = r sin(2 pi u2), r = sqrt(-2 log(1 - u1)).
//   bernoulli: element i uses word i, u = w * 2^-32, value = u < p.
//   randperm: Fisher-Yates step s uses words 2s, 2s+1; multinomial: draw d
//     uses words 2d, 2d+1 (see the kernel for which draw is which).
#pragma once
#include <cstdint>

#include <ember/core/generator.h>
#include <ember/core/tensor.h>

namespace ember::cpu {

// Counter blocks a draw of n elements needs when each takes `words` 32-bit
// words (1 or 2; normals pair up elements but use the same count).
inline uint64_t blocks_for(int64_t n, int words) {
  return (static_cast<uint64_t>(n) * words + 3) / 4;
}
// Words per element: float64 takes 53-bit uniforms from two words.
inline int uniform_words(DType t) { return t == DType::Float64 ? 2 : 1; }
inline int randint_words(uint64_t range) { return range > 0xFFFFFFFFull ? 2 : 1; }

// All `out` tensors below are contiguous.
void uniform(Tensor& out, double from, double to, const PhiloxStream& s);
void normal(Tensor& out, double mean, double std, const PhiloxStream& s);
// low + (word % range); range == 0 means the full 2^64 range.
void randint(Tensor& out, int64_t low, uint64_t range, const PhiloxStream& s);
// out[i] = u_i < p[i] (p contiguous float64 of out's numel), or u_i < p.
void bernoulli(Tensor& out, const Tensor& p, const PhiloxStream& s);
void bernoulli(Tensor& out, double p, const PhiloxStream& s);
void exponential(Tensor& out, double lambd, const PhiloxStream& s);
// Fisher-Yates shuffle of 0..n-1 (two words per step).
void randperm(Tensor& out, const PhiloxStream& s);
// probs: contiguous float64 [rows, categories]; out: int64 [rows, num_samples].
void multinomial(Tensor& out, const Tensor& probs, bool replacement, const PhiloxStream& s);

}  // namespace ember::cpu
