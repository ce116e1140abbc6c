// ember::Tensor: a cheap value handle around a shared TensorImpl.
// Copying a Tensor shares the data; ops return new handles.
//
// The methods below forward to the free functions of the op families
// (core/ops/<family>.h); each family's front-end file implements its methods.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/scalar.h>
#include <ember/core/shape.h>
#include <ember/core/tensor_impl.h>

namespace ember {

namespace autograd { struct Node; }

using Dims = std::vector<int64_t>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- structure (core/tensor.cpp)
  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  const Shape& shape() const;
  const Shape& sizes() const { return shape(); }
  int64_t size(int64_t dim) const;
  const Strides& strides() const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t numel() const { return numel_of(shape()); }
  int64_t storage_offset() const { return impl_->offset; }
  DType dtype() const;
  Device device() const;
  size_t element_size() const { return itemsize(dtype()); }
  bool is_contiguous() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  const Storage& storage() const { return impl_->storage; }
  // Pointer to element 0 (storage start plus offset).
  void* data_ptr() const;
  template <class T> T* data() const { return static_cast<T*>(data_ptr()); }
  uint32_t version() const { return impl_->storage.version(); }
  void bump_version() const { impl_->storage.bump_version(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  std::string str() const;        // PyTorch-style repr (core/print.cpp)
  std::string shape_str() const { return ember::shape_str(shape()); }
  Scalar item() const;            // core/ops/copy.cpp

  // ---- autograd (autograd/variable.cpp)
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  Tensor grad() const;
  void set_grad(const Tensor& g) const;
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  void retain_grad() const;
  bool retains_grad() const;
  Tensor detach() const;
  // Made under inference_mode (or a view of such a tensor).
  bool is_inference() const { return impl_->is_inference; }
  Tensor& detach_();
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false,
                bool create_graph = false) const;
  // Hook on the gradient flowing into this tensor; may return a replacement.
  using Hook = std::function<Tensor(const Tensor&)>;
  int register_hook(Hook hook) const;
  void remove_hook(int handle) const;

  // ---- copy and conversion (core/ops/copy.cpp)
  Tensor to(DType dtype, bool copy = false) const;
  Tensor to(Device device, bool copy = false) const;
  // non_blocking: a copy between the CPU and a GPU does not wait when the CPU
  // side is pinned memory (as PyTorch's; the argument order is PyTorch's too).
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor clone() const;
  Tensor contiguous() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  // A copy in page-locked memory (this tensor when it is pinned already), from
  // which copies to a GPU can run asynchronously; needs a usable GPU.
  Tensor pin_memory() const;
  bool is_pinned() const;
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();
  Tensor cpu() const { return to(kCPU); }
  Tensor float_() const { return to(DType::Float32); }
  Tensor double_() const { return to(DType::Float64); }
  Tensor half() const { return to(DType::Float16); }
  Tensor bfloat16() const { return to(DType::BFloat16); }
  Tensor long_() const { return to(DType::Int64); }
  Tensor int_() const { return to(DType::Int32); }
  Tensor bool_() const { return to(DType::Bool); }

  // ---- unary (core/ops/unary.cpp)
  Tensor neg() const;  Tensor abs() const;  Tensor exp() const;  Tensor log() const;
  Tensor log1p() const;  Tensor expm1() const;  Tensor sqrt() const;  Tensor rsqrt() const;
  Tensor sin() const;  Tensor cos() const;  Tensor tanh() const;  Tensor sigmoid() const;
  Tensor relu() const;  Tensor silu() const;  Tensor sign() const;  Tensor floor() const;
  Tensor ceil() const;  Tensor round() const;  Tensor reciprocal() const;  Tensor square() const;
  Tensor gelu(const std::string& approximate = "none") const;
  Tensor softplus(double beta = 1.0, double threshold = 20.0) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor& neg_();  Tensor& abs_();  Tensor& exp_();  Tensor& log_();  Tensor& sqrt_();
  Tensor& sigmoid_();  Tensor& tanh_();  Tensor& relu_();  Tensor& floor_();  Tensor& ceil_();
  Tensor& round_();  Tensor& reciprocal_();
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max);
  Tensor& pow_(const Scalar& exponent);
  Tensor erf() const;
  Tensor round(int64_t decimals) const;
  Tensor clamp(const Tensor& min, const Tensor& max) const;  // an undefined bound is skipped
  Tensor& log1p_();  Tensor& expm1_();  Tensor& rsqrt_();  Tensor& sin_();  Tensor& cos_();
  Tensor& silu_();  Tensor& sign_();  Tensor& erf_();  Tensor& square_();
  Tensor& pow_(const Tensor& exponent);
  Tensor& clamp_(const Tensor& min, const Tensor& max);
  Tensor& nan_to_num_(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);

  // ---- binary (core/ops/binary.cpp)
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor div(const Tensor& other, std::optional<std::string> rounding_mode = std::nullopt) const;
  Tensor remainder(const Tensor& other) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor eq(const Tensor& other) const;  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;  Tensor ge(const Tensor& other) const;
  bool equal(const Tensor& other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& div_(const Tensor& other, std::optional<std::string> rounding_mode = std::nullopt);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor& floor_divide_(const Tensor& other);
  Tensor& remainder_(const Tensor& other);

  // ---- reductions (core/ops/reduce.cpp) — empty dims means all dims
  Tensor sum(const Dims& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(const Dims& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(const Dims& dims = {}, bool keepdim = false) const;
  Tensor amin(const Dims& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(const Dims& dims = {}, double correction = 1, bool keepdim = false) const;
  Tensor std(const Dims& dims = {}, double correction = 1, bool keepdim = false) const;
  Tensor norm(double p = 2, const Dims& dims = {}, bool keepdim = false) const;
  Tensor logsumexp(const Dims& dims, bool keepdim = false) const;
  Tensor all(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor any(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;

  // ---- softmax (core/ops/softmax.cpp)
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;

  // ---- matmul (core/ops/matmul.cpp)
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor outer(const Tensor& other) const;

  // ---- shape and views (core/ops/shape.cpp)
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor view_as(const Tensor& other) const { return view(other.shape()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.shape()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(const Dims& dims) const;
  Tensor expand(const Shape& shape) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.shape()); }
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor flip(const Dims& dims) const;
  Tensor roll(const Dims& shifts, const Dims& dims) const;
  Tensor repeat(const Shape& repeats) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;

  // ---- indexing (core/ops/index.cpp)
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);

  // ---- random, in place (core/ops/random.cpp)
  Tensor& uniform_(double from = 0.0, double to = 1.0);
  Tensor& normal_(double mean = 0.0, double std = 1.0);
  Tensor& bernoulli_(double p = 0.5);

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// A 0-d tensor holding `value`, marked as a wrapped number so it promotes like
// a Python scalar (`x + 1` keeps x's float32). Used for scalar overloads.
Tensor scalar_tensor(const Scalar& value, Device device = kCPU);
Tensor scalar_tensor(const Scalar& value, DType dtype, Device device = kCPU);

// Uninitialised contiguous tensor (core/tensor.cpp).
Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
// An elementwise op's uninitialised result of `shape`: laid out as the first
// operand of that very shape when it is dense but not contiguous (x.t(), a
// channels-last permute), so the op walks every operand in memory order, as
// PyTorch's results do; contiguous otherwise (core/tensor.cpp).
Tensor empty_like_operands(const Shape& shape, DType dtype, Device device, const std::vector<Tensor>& operands);
// A view of `base`'s storage with the given geometry; shares version counter.
Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset);

// "float32 tensor on cpu with shape [2, 3]" pieces for error messages.
std::string describe(const Tensor& t);

}  // namespace ember
