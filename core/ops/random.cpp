// The random family: argument checks, the generator's counter reservation and
// the CPU kernel call. Random draws are not differentiable.
#include <ember/core/ops/random.h>

#include <cmath>

#include <ember/autograd/functions/common.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/cpu/random.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/copy.h>
#include <ember/cuda/random.h>

namespace ember {

namespace {

Generator pick_generator(const OptGenerator& gen, Device device, const char* op) {
  if (!gen) return default_generator(device);
  EMBER_CHECK(gen->device().type == device.type, Error, op, ": expected a generator on ", device.str(),
              " (the tensor's device), got one on ", gen->device().str());
  return *gen;
}

void check_floating(DType dtype, const char* op) {
  EMBER_CHECK(is_floating(dtype), Error, op, ": expected a floating point dtype, got ", dtype_name(dtype));
}

// Runs `kernel(out, stream)` into self: in place when self is contiguous,
// else through a contiguous buffer so element i's numbers stay those of
// index i. Bumps the version; the data no longer depends on any history.
template <class Kernel>
Tensor& fill_random(Tensor& self, const char* op, const OptGenerator& gen, uint64_t blocks, Kernel kernel) {
  autograd::check_inplace(self, op);
  EMBER_CHECK(self.device().is_cpu() || self.device().is_cuda(), NotImplementedError, op,
              ": no kernel for device ", self.device().str());
  check_no_internal_overlap(self, op);
  Generator g = pick_generator(gen, self.device(), op);
  if (self.numel() > 0) {
    const PhiloxStream s = g.reserve(blocks);
    if (self.is_contiguous()) {
      kernel(self, s);
    } else {
      Tensor buf = empty(self.shape(), self.dtype(), self.device());
      kernel(buf, s);
      if (self.device().is_cuda()) cuda::copy_on_device(self, buf);
      else cpu::copy(self, buf);
    }
  }
  self.bump_version();
  if (self.requires_grad()) autograd::meta(self).grad_fn.reset();
  return self;
}

// Largest and smallest integers the dtype holds exactly (floats: 2^digits).
std::pair<int64_t, int64_t> exact_int_range(DType t) {
  switch (t) {
    case DType::Bool: return {0, 1};
    case DType::UInt8: return {0, 255};
    case DType::Int8: return {-128, 127};
    case DType::Int32: return {INT32_MIN, INT32_MAX};
    case DType::Int64: return {INT64_MIN, INT64_MAX};
    case DType::Float16: return {-(int64_t{1} << 11), int64_t{1} << 11};
    case DType::BFloat16: return {-(int64_t{1} << 8), int64_t{1} << 8};
    case DType::Float32: return {-(int64_t{1} << 24), int64_t{1} << 24};
    case DType::Float64: return {-(int64_t{1} << 53), int64_t{1} << 53};
    case DType::Complex64: case DType::Complex128: break;
  }
  throw_unsupported_dtype(t, "random_", "");
}

// [from, to) must be non-empty and inside the dtype's exact integers.
void check_int_range(const char* op, DType dtype, int64_t from, int64_t to) {
  EMBER_CHECK(from < to, Error, op, ": expects 'from' (low) to be less than 'to' (high), but got from=", from,
              " >= to=", to);
  const auto [lo, hi] = exact_int_range(dtype);
  EMBER_CHECK(from >= lo && to - 1 <= hi, Error, op, ": range [", from, ", ", to, ") is out of bounds for dtype ",
              dtype_name(dtype), " (values ", lo, " to ", hi, ")");
}

// The backend seam: each fill runs on its output's device.
namespace kernel {
void uniform(Tensor& o, double from, double to, const PhiloxStream& s) {
  o.device().is_cuda() ? cuda::uniform(o, from, to, s) : cpu::uniform(o, from, to, s);
}
void normal(Tensor& o, double mean, double std, const PhiloxStream& s) {
  o.device().is_cuda() ? cuda::normal(o, mean, std, s) : cpu::normal(o, mean, std, s);
}
void randint(Tensor& o, int64_t low, uint64_t range, const PhiloxStream& s) {
  o.device().is_cuda() ? cuda::randint(o, low, range, s) : cpu::randint(o, low, range, s);
}
void bernoulli(Tensor& o, const Tensor& p, const PhiloxStream& s) {
  o.device().is_cuda() ? cuda::bernoulli(o, p.to(o.device()), s) : cpu::bernoulli(o, p, s);
}
void bernoulli(Tensor& o, double p, const PhiloxStream& s) {
  o.device().is_cuda() ? cuda::bernoulli(o, p, s) : cpu::bernoulli(o, p, s);
}
void exponential(Tensor& o, double lambd, const PhiloxStream& s) {
  o.device().is_cuda() ? cuda::exponential(o, lambd, s) : cpu::exponential(o, lambd, s);
}
}  // namespace kernel

Tensor contiguous_float64(const Tensor& t) {
  NoGradGuard no_grad;
  return t.detach().to(DType::Float64).contiguous();
}

}  // namespace

// ---- in-place fills

Tensor& uniform_(Tensor& self, double from, double to, OptGenerator gen) {
  check_floating(self.dtype(), "uniform_");
  EMBER_CHECK(from <= to, Error, "uniform_: expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  EMBER_CHECK(std::isfinite(to - from), Error, "uniform_: from and to must be finite with a finite range, got from=",
              from, " to=", to);
  const uint64_t blocks = cpu::blocks_for(self.numel(), cpu::uniform_words(self.dtype()));
  return fill_random(self, "uniform_", gen, blocks,
                     [&](Tensor& out, const PhiloxStream& s) { kernel::uniform(out, from, to, s); });
}

Tensor& normal_(Tensor& self, double mean, double std, OptGenerator gen) {
  check_floating(self.dtype(), "normal_");
  EMBER_CHECK(std >= 0.0, Error, "normal_: expects std >= 0.0, but found std ", std);
  // Box-Muller pairs: round the count up to even so the last pair is whole.
  const int64_t n = self.numel() + (self.numel() & 1);
  const uint64_t blocks = cpu::blocks_for(n, cpu::uniform_words(self.dtype()));
  return fill_random(self, "normal_", gen, blocks,
                     [&](Tensor& out, const PhiloxStream& s) { kernel::normal(out, mean, std, s); });
}

Tensor& bernoulli_(Tensor& self, double p, OptGenerator gen) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, Error, "bernoulli_: expects p to be in [0, 1], but got p=", p);
  return fill_random(self, "bernoulli_", gen, cpu::blocks_for(self.numel(), 1),
                     [&](Tensor& out, const PhiloxStream& s) { kernel::bernoulli(out, p, s); });
}

Tensor& bernoulli_(Tensor& self, const Tensor& p, OptGenerator gen) {
  EMBER_CHECK(p.defined() && is_floating(p.dtype()), TypeError, "bernoulli_: expected p to be a floating point tensor");
  const Shape shape = broadcast_shapes(self.shape(), p.shape(), "bernoulli_");
  EMBER_CHECK(shape == self.shape(), Error, "bernoulli_: p of shape ", shape_str(p.shape()),
              " cannot be broadcast to ", shape_str(self.shape()));
  Tensor prob = contiguous_float64(expand(p.detach(), self.shape()));
  const Tensor host = prob.device().is_cpu() ? prob : prob.cpu();  // the range check reads it here
  const double* pr = host.data<double>();
  for (int64_t i = 0; i < prob.numel(); ++i) {
    EMBER_CHECK(pr[i] >= 0.0 && pr[i] <= 1.0, Error, "bernoulli_: expects all elements of p to be in [0, 1], got ",
                pr[i]);
  }
  return fill_random(self, "bernoulli_", gen, cpu::blocks_for(self.numel(), 1),
                     [&](Tensor& out, const PhiloxStream& s) { kernel::bernoulli(out, prob, s); });
}

Tensor& exponential_(Tensor& self, double lambd, OptGenerator gen) {
  check_floating(self.dtype(), "exponential_");
  EMBER_CHECK(lambd > 0.0, Error, "exponential_: expects lambda > 0.0, but found lambda=", lambd);
  const uint64_t blocks = cpu::blocks_for(self.numel(), cpu::uniform_words(self.dtype()));
  return fill_random(self, "exponential_", gen, blocks,
                     [&](Tensor& out, const PhiloxStream& s) { kernel::exponential(out, lambd, s); });
}

Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to, OptGenerator gen) {
  uint64_t range;  // 0 stands for 2^64
  if (to) {
    check_int_range("random_", self.dtype(), from, *to);
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
  } else {
    // Up to the largest integer the dtype holds exactly, inclusive.
    const uint64_t top = static_cast<uint64_t>(exact_int_range(self.dtype()).second);
    EMBER_CHECK(from >= 0 && static_cast<uint64_t>(from) <= top, Error, "random_: from=", from,
                " is outside [0, ", top, "], the integers ", dtype_name(self.dtype()), " holds exactly");
    range = top - static_cast<uint64_t>(from) + 1;
  }
  const int words = range == 0 ? 2 : cpu::randint_words(range);
  return fill_random(self, "random_", gen, cpu::blocks_for(self.numel(), words),
                     [&](Tensor& out, const PhiloxStream& s) { kernel::randint(out, from, range, s); });
}

Tensor& Tensor::uniform_(double from, double to) { return ember::uniform_(*this, from, to); }
Tensor& Tensor::normal_(double mean, double std) { return ember::normal_(*this, mean, std); }
Tensor& Tensor::bernoulli_(double p) { return ember::bernoulli_(*this, p); }

// ---- sampling functions

namespace {
// A complex tensor whose parts are drawn by `draw` (as PyTorch: randn's parts
// have variance 1/2 each, so that E|z|^2 = 1).
template <class Draw>
Tensor complex_random(const Shape& shape, DType dtype, Device device, Draw&& draw) {
  Shape parts_shape = shape;
  parts_shape.push_back(2);
  Tensor parts = empty(parts_shape, complex_part_dtype(dtype), device);
  draw(parts);
  return view_as_complex(parts);
}
}  // namespace

Tensor rand(const Shape& shape, DType dtype, Device device, OptGenerator gen) {
  check_size_nonnegative(shape, "rand");
  if (is_complex(dtype)) {
    return complex_random(shape, dtype, device, [&](Tensor& p) { uniform_(p, 0.0, 1.0, std::move(gen)); });
  }
  check_floating(dtype, "rand");
  Tensor t = empty(shape, dtype, device);
  return uniform_(t, 0.0, 1.0, std::move(gen));
}

Tensor randn(const Shape& shape, DType dtype, Device device, OptGenerator gen) {
  check_size_nonnegative(shape, "randn");
  if (is_complex(dtype)) {
    return complex_random(shape, dtype, device, [&](Tensor& p) { normal_(p, 0.0, std::sqrt(0.5), std::move(gen)); });
  }
  check_floating(dtype, "randn");
  Tensor t = empty(shape, dtype, device);
  return normal_(t, 0.0, 1.0, std::move(gen));
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device, OptGenerator gen) {
  check_size_nonnegative(shape, "randint");
  check_int_range("randint", dtype, low, high);
  Tensor t = empty(shape, dtype, device);
  return random_(t, low, high, std::move(gen));
}

Tensor randperm(int64_t n, DType dtype, Device device, OptGenerator gen) {
  EMBER_CHECK(n >= 0, Error, "randperm: n must be non-negative, got ", n);
  EMBER_CHECK(dtype != DType::Bool || n <= 2, Error, "randperm: n=", n, " is too large for dtype bool");
  EMBER_CHECK(!is_floating(dtype) || n <= (int64_t{1} << (dtype == DType::Float64 ? 53 : dtype == DType::Float32
                                                          ? 24 : dtype == DType::Float16 ? 11 : 8)),
              Error, "randperm: n=", n, " is too large for dtype ", dtype_name(dtype));
  // The shuffle is sequential: on a GPU it runs on the host from the
  // device's generator and the permutation is copied over.
  Tensor t = empty({n}, dtype, kCPU);
  Generator g = pick_generator(gen, device, "randperm");
  if (n > 1) cpu::randperm(t, g.reserve(static_cast<uint64_t>(n) / 2));
  else if (n == 1) t.fill_(0);
  return device.is_cpu() ? t : t.to(device);
}

Tensor rand_like(const Tensor& t, std::optional<DType> dtype, OptGenerator gen) {
  return rand(t.shape(), dtype.value_or(t.dtype()), t.device(), std::move(gen));
}
Tensor randn_like(const Tensor& t, std::optional<DType> dtype, OptGenerator gen) {
  return randn(t.shape(), dtype.value_or(t.dtype()), t.device(), std::move(gen));
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<DType> dtype, OptGenerator gen) {
  return randint(low, high, t.shape(), dtype.value_or(t.dtype()), t.device(), std::move(gen));
}

Tensor normal(double mean, double std, const Shape& shape, DType dtype, Device device, OptGenerator gen) {
  check_size_nonnegative(shape, "normal");
  check_floating(dtype, "normal");
  EMBER_CHECK(std >= 0.0, Error, "normal: expects std >= 0.0, but found std ", std);
  Tensor t = empty(shape, dtype, device);
  return normal_(t, mean, std, std::move(gen));
}

Tensor normal(const Tensor& mean, const Tensor& std, OptGenerator gen) {
  EMBER_CHECK(mean.defined() && std.defined(), ValueError, "normal: got an undefined tensor");
  const Device dev = common_device("normal", {mean, std});
  EMBER_CHECK(is_floating(mean.dtype()) && is_floating(std.dtype()), Error,
              "normal: expected floating point mean and std, got ", dtype_name(mean.dtype()), " and ",
              dtype_name(std.dtype()));
  const Tensor s64 = contiguous_float64(std.detach());
  const Tensor host = s64.device().is_cpu() ? s64 : s64.cpu();  // the check reads std here
  for (int64_t i = 0; i < host.numel(); ++i) {
    EMBER_CHECK(host.data<double>()[i] >= 0.0, Error, "normal: expects all elements of std >= 0.0");
  }
  const Shape shape = broadcast_shapes(mean.shape(), std.shape(), "normal");
  const DType dtype = result_type(mean, std);
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor z = empty(shape, dtype, dev);
    normal_(z, 0.0, 1.0, std::move(gen));
    out = add(mul(z, std.detach()), mean.detach());
  }
  if (autograd::any_requires_grad({mean, std})) {
    // torch's overload numbering: 1 (Tensor, float), 2 (float, Tensor), 3 (Tensor, Tensor).
    const bool wm = mean.impl()->wrapped_number, ws = std.impl()->wrapped_number;
    const char* name = ws ? "NormalBackward1" : wm ? "NormalBackward2" : "NormalBackward3";
    autograd::record(name, {mean, std}, {out}, {}, autograd::functions::zero_backward());
  }
  return out;
}

Tensor normal(const Tensor& mean, double std, OptGenerator gen) {
  return normal(mean, scalar_tensor(std, mean.device()), std::move(gen));
}

Tensor normal(double mean, const Tensor& std, OptGenerator gen) {
  return normal(scalar_tensor(mean, std.device()), std, std::move(gen));
}

Tensor bernoulli(const Tensor& p, OptGenerator gen) {
  EMBER_CHECK(p.defined() && is_floating(p.dtype()), Error, "bernoulli: expected a floating point tensor of ",
              "probabilities, got ", p.defined() ? dtype_name(p.dtype()) : "an undefined tensor");
  Tensor out = empty(p.shape(), p.dtype(), p.device());
  {
    NoGradGuard no_grad;
    bernoulli_(out, p, std::move(gen));
  }
  if (autograd::any_requires_grad({p})) {
    autograd::record("BernoulliBackward0", {p}, {out}, {}, autograd::functions::zero_backward());
  }
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, OptGenerator gen) {
  EMBER_CHECK(probs.defined() && (probs.dim() == 1 || probs.dim() == 2), Error,
              "multinomial: prob_dist must be 1 or 2 dim, got shape ", probs.defined() ? probs.shape_str() : "?");
  EMBER_CHECK(is_floating(probs.dtype()), Error, "multinomial: expected a floating point prob_dist, got ",
              dtype_name(probs.dtype()));
  EMBER_CHECK(num_samples > 0, Error, "multinomial: cannot sample num_samples <= 0 samples, got ", num_samples);
  const int64_t cats = probs.size(-1);
  EMBER_CHECK(cats > 0, Error, "multinomial: prob_dist has no categories");
  EMBER_CHECK(replacement || num_samples <= cats, Error, "multinomial: cannot sample num_samples=", num_samples,
              " > prob_dist.size(-1)=", cats, " samples without replacement");
  // Sampled on the host (from the device's generator) and copied back.
  Tensor p = contiguous_float64(probs.dim() == 1 ? probs.unsqueeze(0) : probs);
  if (!p.device().is_cpu()) p = p.cpu();
  const int64_t rows = p.size(0);
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t positive = 0;
    for (int64_t c = 0; c < cats; ++c) {
      const double v = p.data<double>()[r * cats + c];
      EMBER_CHECK(std::isfinite(v) && v >= 0, Error, "multinomial: probability tensor contains either inf, nan ",
                  "or element < 0 (row ", r, ")");
      total += v;
      positive += v > 0;
    }
    EMBER_CHECK(total > 0, Error, "multinomial: invalid multinomial distribution (sum of probabilities <= 0) in row ",
                r);
    EMBER_CHECK(replacement || positive >= num_samples, Error, "multinomial: invalid multinomial distribution ",
                "(with replacement=False, not enough non-zero categories to sample) in row ", r);
  }
  Generator g = pick_generator(gen, probs.device(), "multinomial");
  Tensor out = empty({rows, num_samples}, DType::Int64, kCPU);
  const int64_t draws = replacement ? rows * num_samples : rows * cats;
  cpu::multinomial(out, p, replacement, g.reserve(cpu::blocks_for(draws, 2)));
  if (!probs.device().is_cpu()) out = out.to(probs.device());
  return probs.dim() == 1 ? out.squeeze(0) : out;
}

}  // namespace ember
