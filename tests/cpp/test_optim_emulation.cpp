// The multi-tensor optimizer kernels and their chunking
// (cuda/device/optim_kernels.cuh) run on the CPU through
// tests/cpp/cuda_emulation.h against ember's CPU kernels (core/cpu/optim.cpp):
// SGD, Adam/AdamW, RMSprop and Adagrad with every option combination, two
// steps with the state carried over, float32 and float64, and parameters of
// several sizes, one of them spanning two chunks (per-chunk offsets).
#include <ember/core/cpu/optim.h>
#include <ember/core/ops/optim.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/optim_kernels.cuh>

namespace {

using namespace emu_test;

// Parameter sizes: the first spans two chunks; the option sweeps use small
// ones (the formulas), the case with every buffer the large ones (the chunking).
const std::vector<int64_t> kLarge = {ember::cuda::kChunk + 1000, 1, 333};
const std::vector<int64_t> kSmall = {1000, 1, 333};
std::vector<int64_t> kSizes = kLarge;

std::vector<Tensor> random_list(DType dt, unsigned seed, bool positive = false) {
  std::vector<Tensor> out;
  for (int64_t n : kSizes) {
    std::vector<double> v = normal_values(static_cast<size_t>(n), 1.0, seed++);
    if (positive) for (double& x : v) x = std::fabs(x);
    out.push_back(tensor_of(v, {n}, dt));
  }
  return out;
}

std::vector<Tensor> copies(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(t.defined() ? t.to(t.dtype(), /*copy=*/true) : Tensor());
  return out;
}

void require_lists(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol, const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!want[i].defined()) continue;
    INFO("tensor " << i);
    require_close(values_of(got[i]), values_of(want[i]), tol, tol, what);
  }
}

template <class Chunk, class Kernel>
void run(const std::vector<Chunk>& chunks, Kernel kernel) {
  if (!chunks.empty()) launch(static_cast<unsigned>(chunks.size()), ember::cuda::kOptimThreads, 0, kernel);
}

template <class T>
void sgd_case(const ember::SgdOptions& o) {
  const DType dt = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  INFO("sgd momentum " << o.momentum << " dampening " << o.dampening << " nesterov " << o.nesterov << " wd "
                       << o.weight_decay << " maximize " << o.maximize << " " << ember::dtype_name(dt));
  std::vector<Tensor> p = random_list(dt, 1), buf = random_list(dt, 50);
  if (o.momentum == 0) buf = std::vector<Tensor>(kSizes.size());
  std::vector<Tensor> ep = copies(p), ebuf = copies(buf);
  const int index = p[0].device().index;
  for (int step = 0; step < 2; ++step) {
    const std::vector<Tensor> g = random_list(dt, 100 + step);
    const std::vector<bool> init(kSizes.size(), step == 0);
    ember::cpu::sgd(p, g, buf, init, o);
    const auto chunks = ember::cuda::sgd_chunks<T>(ep, g, ebuf, init, o, dt, index);
    const auto args = ember::cuda::sgd_args<T>(o);
    run(chunks, [&] { ember::cuda::sgd_kernel<T>(chunks.data(), args); });
  }
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  require_lists(ep, p, tol, "param");
  require_lists(ebuf, buf, tol, "momentum_buffer");
}

template <class T>
void adam_case(const ember::AdamOptions& o) {
  const DType dt = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  INFO("adam amsgrad " << o.amsgrad << " decoupled " << o.decoupled_weight_decay << " wd " << o.weight_decay
                       << " maximize " << o.maximize << " " << ember::dtype_name(dt));
  std::vector<Tensor> p = random_list(dt, 1), m = random_list(dt, 20), v = random_list(dt, 30, true),
                      vmax = random_list(dt, 40, true);
  if (!o.amsgrad) vmax = std::vector<Tensor>(kSizes.size());
  std::vector<Tensor> ep = copies(p), em = copies(m), ev = copies(v), evmax = copies(vmax);
  const int index = p[0].device().index;
  for (int step = 0; step < 2; ++step) {
    const std::vector<Tensor> g = random_list(dt, 100 + step);
    const std::vector<double> counts = {1.0 + step, 5.0 + step, 2.0 + step};  // each parameter's own count
    ember::cpu::adam(p, g, m, v, vmax, counts, o);
    const auto chunks = ember::cuda::adam_chunks<T>(ep, g, em, ev, evmax, counts, o, dt, index);
    const auto args = ember::cuda::adam_args<T>(o);
    run(chunks, [&] { ember::cuda::adam_kernel<T>(chunks.data(), args); });
  }
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  require_lists(ep, p, tol, "param");
  require_lists(em, m, tol, "exp_avg");
  require_lists(ev, v, tol, "exp_avg_sq");
  require_lists(evmax, vmax, tol, "max_exp_avg_sq");
}

template <class T>
void rmsprop_case(const ember::RmspropOptions& o) {
  const DType dt = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  INFO("rmsprop centered " << o.centered << " momentum " << o.momentum << " wd " << o.weight_decay << " maximize "
                           << o.maximize << " " << ember::dtype_name(dt));
  std::vector<Tensor> p = random_list(dt, 1), sq = random_list(dt, 20, true), ga = random_list(dt, 30),
                      buf = random_list(dt, 40);
  if (!o.centered) ga = std::vector<Tensor>(kSizes.size());
  else {  // keep avg_sq - ga^2 positive: ga small against sq
    std::vector<Tensor> small;
    for (size_t i = 0; i < kSizes.size(); ++i) {
      std::vector<double> v = normal_values(static_cast<size_t>(kSizes[i]), 0.01, 77 + static_cast<unsigned>(i));
      small.push_back(tensor_of(v, {kSizes[i]}, dt));
    }
    ga = small;
  }
  if (o.momentum == 0) buf = std::vector<Tensor>(kSizes.size());
  std::vector<Tensor> ep = copies(p), esq = copies(sq), ega = copies(ga), ebuf = copies(buf);
  const int index = p[0].device().index;
  for (int step = 0; step < 2; ++step) {
    const std::vector<Tensor> g = random_list(dt, 100 + step);
    ember::cpu::rmsprop(p, g, sq, ga, buf, o);
    const auto chunks = ember::cuda::rmsprop_chunks<T>(ep, g, esq, ega, ebuf, o, dt, index);
    const auto args = ember::cuda::rmsprop_args<T>(o);
    run(chunks, [&] { ember::cuda::rmsprop_kernel<T>(chunks.data(), args); });
  }
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  require_lists(ep, p, tol, "param");
  require_lists(esq, sq, tol, "square_avg");
  require_lists(ega, ga, tol, "grad_avg");
  require_lists(ebuf, buf, tol, "momentum_buffer");
}

template <class T>
void adagrad_case(const ember::AdagradOptions& o) {
  const DType dt = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  INFO("adagrad lr_decay " << o.lr_decay << " wd " << o.weight_decay << " maximize " << o.maximize << " "
                           << ember::dtype_name(dt));
  std::vector<Tensor> p = random_list(dt, 1), sum = random_list(dt, 20, true);
  std::vector<Tensor> ep = copies(p), esum = copies(sum);
  const int index = p[0].device().index;
  for (int step = 0; step < 2; ++step) {
    const std::vector<Tensor> g = random_list(dt, 100 + step);
    const std::vector<double> counts = {1.0 + step, 3.0 + step, 7.0 + step};
    ember::cpu::adagrad(p, g, sum, counts, o);
    const auto chunks = ember::cuda::adagrad_chunks<T>(ep, g, esum, counts, o, dt, index);
    const auto args = ember::cuda::adagrad_args<T>(o);
    run(chunks, [&] { ember::cuda::adagrad_kernel<T>(chunks.data(), args); });
  }
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  require_lists(ep, p, tol, "param");
  require_lists(esum, sum, tol, "state_sum");
}

}  // namespace

TEST_CASE("optimizer kernels (host emulation): chunking covers every element once", "[emulation]") {
  kSizes = kLarge;
  const std::vector<Tensor> p = random_list(DType::Float32, 1), g = random_list(DType::Float32, 2);
  const auto chunks = ember::cuda::sgd_chunks<float>(p, g, std::vector<Tensor>(kSizes.size()),
                                                     std::vector<bool>(kSizes.size()), ember::SgdOptions{},
                                                     DType::Float32, p[0].device().index);
  REQUIRE(chunks.size() == 4);  // 65536 + 1000, 1, 333
  REQUIRE(chunks[0].n == ember::cuda::kChunk);
  REQUIRE(chunks[1].n == 1000);
  REQUIRE(chunks[1].p == p[0].data<float>() + ember::cuda::kChunk);
  REQUIRE(chunks[1].g == g[0].data<float>() + ember::cuda::kChunk);
  REQUIRE(chunks[3].n == 333);
  // Parameters of another dtype are left to another launch.
  REQUIRE(ember::cuda::sgd_chunks<double>(p, g, std::vector<Tensor>(kSizes.size()), std::vector<bool>(kSizes.size()),
                                          ember::SgdOptions{}, DType::Float64, p[0].device().index)
              .empty());
}

TEST_CASE("SGD kernel (host emulation) against the CPU kernel, every option", "[emulation]") {
  for (double momentum : {0.0, 0.9})
    for (double dampening : {0.0, 0.3})
      for (bool nesterov : {false, true})
        for (double wd : {0.0, 0.01})
          for (bool maximize : {false, true}) {
            if ((nesterov || dampening != 0) && momentum == 0) continue;
            ember::SgdOptions o;
            o.lr = 0.05, o.momentum = momentum, o.dampening = dampening, o.nesterov = nesterov, o.weight_decay = wd,
            o.maximize = maximize;
            kSizes = momentum != 0 && nesterov && dampening != 0 && wd != 0 && maximize ? kLarge : kSmall;
            sgd_case<float>(o);
            if (maximize) sgd_case<double>(o);
          }
}

TEST_CASE("Adam / AdamW kernel (host emulation) against the CPU kernel, every option", "[emulation]") {
  for (bool amsgrad : {false, true})
    for (bool decoupled : {false, true})
      for (double wd : {0.0, 0.1})
        for (bool maximize : {false, true}) {
          ember::AdamOptions o;
          o.lr = 0.01, o.beta1 = 0.8, o.beta2 = 0.95, o.eps = 1e-6, o.weight_decay = wd, o.amsgrad = amsgrad,
          o.decoupled_weight_decay = decoupled, o.maximize = maximize;
          kSizes = amsgrad && decoupled && wd != 0 && maximize ? kLarge : kSmall;
          adam_case<float>(o);
          if (amsgrad) adam_case<double>(o);
        }
}

TEST_CASE("RMSprop kernel (host emulation) against the CPU kernel, every option", "[emulation]") {
  for (bool centered : {false, true})
    for (double momentum : {0.0, 0.5})
      for (double wd : {0.0, 0.1})
        for (bool maximize : {false, true}) {
          ember::RmspropOptions o;
          o.lr = 0.01, o.alpha = 0.9, o.eps = 1e-6, o.weight_decay = wd, o.momentum = momentum, o.centered = centered,
          o.maximize = maximize;
          kSizes = centered && momentum != 0 && wd != 0 && maximize ? kLarge : kSmall;
          rmsprop_case<float>(o);
          if (centered) rmsprop_case<double>(o);
        }
}

TEST_CASE("Adagrad kernel (host emulation) against the CPU kernel, every option", "[emulation]") {
  for (double lr_decay : {0.0, 0.1})
    for (double wd : {0.0, 0.1})
      for (bool maximize : {false, true}) {
        ember::AdagradOptions o;
        o.lr = 0.1, o.lr_decay = lr_decay, o.weight_decay = wd, o.eps = 1e-8, o.maximize = maximize;
        kSizes = lr_decay != 0 && wd != 0 && maximize ? kLarge : kSmall;
        adagrad_case<float>(o);
        adagrad_case<double>(o);
      }
}
