// Building, caching and running the CPU FFT's plans (see fft_plan.h and, for
// the passes themselves, fft_radix.h).
#include <ember/core/cpu/fft_plan.h>

#include <algorithm>
#include <cmath>
#include <list>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include <ember/core/cpu/fft_radix.h>
#include <ember/core/error.h>

namespace ember::cpu::fft {

std::complex<double> unit_root(int64_t t, int64_t n) {
  t %= n;
  if (t < 0) t += n;
  // Angles in [-π, π]: the reduction is exact in integers, the division and
  // the trigonometry carry long double's extra bits.
  if (2 * t > n) t -= n;
  const long double pi = 3.141592653589793238462643383279502884L;
  const long double angle = -2 * pi * static_cast<long double>(t) / static_cast<long double>(n);
  return {static_cast<double>(std::cos(angle)), static_cast<double>(std::sin(angle))};
}

namespace {

// Radices in the order the passes take them: 8 first (fewest passes over
// the data and multiplies), then 4 or 2 for a leftover factor of two, then
// the odd primes.
std::vector<int64_t> radices(int64_t n) {
  std::vector<int64_t> out;
  while (n % 8 == 0) out.push_back(8), n /= 8;
  if (n % 4 == 0) out.push_back(4), n /= 4;
  if (n % 2 == 0) out.push_back(2), n /= 2;
  for (int64_t p = 3; p <= kMaxRadix; p += 2) {
    while (n % p == 0) out.push_back(p), n /= p;
  }
  if (n != 1) return {};  // a prime factor above kMaxRadix remains
  return out;
}

int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

template <class T>
std::shared_ptr<Plan<T>> stockham_plan(int64_t n, const std::vector<int64_t>& factors) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  int64_t L = 1;
  for (int64_t p : factors) {
    Pass<T> pass;
    pass.p = p;
    pass.L = L;
    pass.m = n / (L * p);
    pass.tw.resize(pass.m * (p - 1));
    // L*j1*k < L*m*p = n, so the exponent needs no reduction.
    for (int64_t j1 = 0; j1 < pass.m; ++j1) {
      for (int64_t k = 1; k < p; ++k) {
        const std::complex<double> w = unit_root(L * j1 * k, n);
        pass.tw[j1 * (p - 1) + k - 1] = {static_cast<T>(w.real()), static_cast<T>(w.imag())};
      }
    }
    plan->passes.push_back(std::move(pass));
    L *= p;
  }
  return plan;
}

template <class T>
std::complex<T> narrow(std::complex<double> z) {
  return {static_cast<T>(z.real()), static_cast<T>(z.imag())};
}

template <class T>
std::shared_ptr<Plan<T>> bluestein_plan(int64_t n) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  plan->big = next_power_of_two(2 * n - 1);
  const int64_t big = plan->big;
  const std::vector<int64_t> factors = radices(big);
  // The chirp and the kernel's transform are computed in double even for a
  // float plan: they are the constants every transform is multiplied by.
  std::vector<std::complex<double>> chirp(n);
  for (int64_t t = 0; t < n; ++t) chirp[t] = unit_root((t * t) % (2 * n), 2 * n);  // exp(-πi t²/n)
  std::vector<std::complex<double>> kernel(big), work(big);
  kernel[0] = std::conj(chirp[0]);
  for (int64_t t = 1; t < n; ++t) kernel[t] = kernel[big - t] = std::conj(chirp[t]);
  std::shared_ptr<Plan<double>> exact = stockham_plan<double>(big, factors);
  exact->forward(kernel.data(), work.data());
  plan->chirp.resize(n);
  plan->kernel.resize(big);
  for (int64_t t = 0; t < n; ++t) plan->chirp[t] = narrow<T>(chirp[t]);
  for (int64_t t = 0; t < big; ++t) plan->kernel[t] = narrow<T>(kernel[t] / static_cast<double>(big));
  std::shared_ptr<Plan<T>> sub;
  if constexpr (std::is_same_v<T, double>) {
    sub = exact;
  } else {
    sub = stockham_plan<T>(big, factors);
  }
  add_grid(*sub);
  plan->sub = sub;
  return plan;
}

template <class T>
std::shared_ptr<const Plan<T>> build_complex(int64_t n) {
  const std::vector<int64_t> factors = radices(n);
  if (n == 1 || !factors.empty()) {
    std::shared_ptr<Plan<T>> plan = stockham_plan<T>(n, factors);
    add_grid(*plan);
    return plan;
  }
  return bluestein_plan<T>(n);
}

template <class T>
std::shared_ptr<const RealPlan<T>> build_real(int64_t n) {
  auto plan = std::make_shared<RealPlan<T>>();
  plan->n = n;
  if (n % 2 != 0) {
    plan->inner = complex_plan<T>(n);
    return plan;
  }
  plan->inner = complex_plan<T>(n / 2);
  plan->tw.resize(n / 2 + 1);
  for (int64_t k = 0; k <= n / 2; ++k) plan->tw[k] = narrow<T>(unit_root(k, n));
  return plan;
}

// A map from length to plan with a bound on its size (the oldest plan goes
// first). Plans are built outside the lock, so a slow Bluestein plan does not
// hold up transforms of other lengths; if two threads build the same length,
// the first one stored wins and both use it.
template <class P>
class PlanCache {
 public:
  template <class Build>
  std::shared_ptr<const P> get(int64_t n, const Build& build) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = plans_.find(n);
      if (it != plans_.end()) return it->second;
    }
    std::shared_ptr<const P> plan = build(n);
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = plans_.emplace(n, plan);
    if (!inserted) return it->second;
    order_.push_back(n);
    if (order_.size() > kCapacity) {
      plans_.erase(order_.front());
      order_.pop_front();
    }
    return plan;
  }

 private:
  static constexpr size_t kCapacity = 64;
  std::mutex mutex_;
  std::unordered_map<int64_t, std::shared_ptr<const P>> plans_;
  std::list<int64_t> order_;
};

}  // namespace

template <class T>
template <class E>
void Plan<T>::forward(E* data, E* work) const {
  if (sub) {
    // Bluestein: chirp, convolve with the kernel through the power-of-two
    // FFT (the inverse as conj(F(conj))), chirp again.
    E* a = work;
    E* sub_work = work + big;
    for (int64_t j = 0; j < n; ++j) a[j] = cmul(data[j], chirp[j]);
    std::fill(a + n, a + big, E{});
    sub->forward(a, sub_work);
    for (int64_t k = 0; k < big; ++k) a[k] = conjugate(cmul(a[k], kernel[k]));
    sub->forward(a, sub_work);
    for (int64_t k = 0; k < n; ++k) data[k] = cmul(conjugate(a[k]), chirp[k]);
    return;
  }
  if constexpr (std::is_same_v<E, std::complex<T>>) {
    if (cols) return grid_forward(*this, data, work);
  }
  E* src = data;
  E* dst = work;
  for (const Pass<T>& pass : passes) {
    switch (pass.p) {
      case 2: pass2(pass, src, dst); break;
      case 3: pass3(pass, src, dst); break;
      case 4: pass4(pass, src, dst); break;
      case 5: pass5(pass, src, dst); break;
      case 8: pass8(pass, src, dst); break;
      default: pass_odd(pass, src, dst); break;
    }
    std::swap(src, dst);
  }
  if (src != data) std::copy(src, src + n, data);
}

template <class T>
std::shared_ptr<const Plan<T>> complex_plan(int64_t n) {
  EMBER_CHECK(n >= 1, ValueError, "fft: invalid transform length ", n);
  static PlanCache<Plan<T>> cache;
  return cache.get(n, build_complex<T>);
}

template <class T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n) {
  EMBER_CHECK(n >= 1, ValueError, "fft: invalid transform length ", n);
  static PlanCache<RealPlan<T>> cache;
  return cache.get(n, build_real<T>);
}

template struct Plan<float>;
template struct Plan<double>;
template void Plan<float>::forward(std::complex<float>*, std::complex<float>*) const;
template void Plan<double>::forward(std::complex<double>*, std::complex<double>*) const;
template void Plan<float>::forward(Block<float>*, Block<float>*) const;
template void Plan<double>::forward(Block<double>*, Block<double>*) const;
template std::shared_ptr<const Plan<float>> complex_plan<float>(int64_t);
template std::shared_ptr<const Plan<double>> complex_plan<double>(int64_t);
template std::shared_ptr<const RealPlan<float>> real_plan<float>(int64_t);
template std::shared_ptr<const RealPlan<double>> real_plan<double>(int64_t);

}  // namespace ember::cpu::fft
