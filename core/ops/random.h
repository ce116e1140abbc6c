// The random family: sampling functions and in-place fills. `gen` defaults to
// the device's default generator (core/generator.h).
#pragma once
#include <optional>

#include <ember/core/generator.h>
#include <ember/core/tensor.h>

namespace ember {

using OptGenerator = std::optional<Generator>;

Tensor rand(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU, OptGenerator gen = {});
Tensor randn(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU, OptGenerator gen = {});
// Integers uniform in [low, high).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::Int64, Device device = kCPU,
               OptGenerator gen = {});
Tensor randperm(int64_t n, DType dtype = DType::Int64, Device device = kCPU, OptGenerator gen = {});
Tensor rand_like(const Tensor& t, std::optional<DType> dtype = std::nullopt, OptGenerator gen = {});
Tensor randn_like(const Tensor& t, std::optional<DType> dtype = std::nullopt, OptGenerator gen = {});
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<DType> dtype = std::nullopt,
                    OptGenerator gen = {});
Tensor normal(double mean, double std, const Shape& shape, DType dtype = DType::Float32, Device device = kCPU,
              OptGenerator gen = {});
Tensor normal(const Tensor& mean, const Tensor& std, OptGenerator gen = {});
Tensor normal(const Tensor& mean, double std, OptGenerator gen = {});
Tensor normal(double mean, const Tensor& std, OptGenerator gen = {});
// 0/1 draws with probabilities p (values in [0, 1]), in p's dtype.
Tensor bernoulli(const Tensor& p, OptGenerator gen = {});
// Indices drawn from each row of `probs` (1-d or 2-d, non-negative weights).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, OptGenerator gen = {});

Tensor& uniform_(Tensor& self, double from = 0.0, double to = 1.0, OptGenerator gen = {});
Tensor& normal_(Tensor& self, double mean = 0.0, double std = 1.0, OptGenerator gen = {});
Tensor& bernoulli_(Tensor& self, double p = 0.5, OptGenerator gen = {});
Tensor& bernoulli_(Tensor& self, const Tensor& p, OptGenerator gen = {});
Tensor& exponential_(Tensor& self, double lambd = 1.0, OptGenerator gen = {});
// Integers in [from, to); to = nullopt means up to 2^mantissa for floats and
// the dtype's maximum + 1 for integers, like torch.
Tensor& random_(Tensor& self, int64_t from = 0, std::optional<int64_t> to = std::nullopt, OptGenerator gen = {});

}  // namespace ember
