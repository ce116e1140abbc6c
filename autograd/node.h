// The autograd graph: a Node per recorded op, with edges to the nodes that
// produced its inputs. Backward formulas are written with ember ops, so they
// run on any device and record a graph themselves under create_graph.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::autograd {

using TensorList = std::vector<Tensor>;
struct Node;

struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
  bool valid() const { return node != nullptr; }
};

struct SavedTensorHooks;  // autograd/saved_hooks.h
struct PackedSave;        // autograd/packed_save.h

// A tensor kept for backward, checked against its version when used.
// Outputs of the node are stored without their grad_fn (that would be a
// cycle) and re-attached to it on unpack. Under saved-tensor hooks
// (autograd/saved_hooks.h) only what the pack hook returned is kept, and
// unpack asks the unpack hook for the tensor again.
class SavedTensor {
 public:
  SavedTensor() = default;
  // `hooks`: the saved-tensor hooks in force when the op ran (null: none).
  SavedTensor(const Tensor& t, bool is_output, const std::shared_ptr<const SavedTensorHooks>& hooks = nullptr);
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  void release() {
    data_ = Tensor();
    packed_.reset();
    released_ = true;
  }
  // Moves out the grad_fn of the saved tensor when this is its last handle,
  // so a graph can be torn down without recursion (see Node::~Node).
  void steal_grad_fn(std::vector<std::shared_ptr<Node>>& out);

 private:
  void pack(const Tensor& t, const std::shared_ptr<const SavedTensorHooks>& hooks);
  Tensor unpack_packed(const std::shared_ptr<Node>& owner) const;
  [[noreturn]] void throw_modified(const Tensor& t, const std::shared_ptr<Node>& owner) const;

  Tensor data_;
  std::shared_ptr<PackedSave> packed_;  // set instead of data_ under hooks
  uint32_t version_ = 0;
  bool is_output_ = false;
  bool released_ = false;
  bool requires_grad_ = false;
  uint32_t output_nr_ = 0;
  bool defined_ = false;
};

struct OutputInfo {
  Shape shape;
  DType dtype;
  Device device;
};

struct Node : std::enable_shared_from_this<Node> {
  // Releases the nodes this one points to iteratively: letting shared_ptrs
  // destroy a long chain recursively overflows the stack (a 100k-op graph).
  virtual ~Node();
  virtual std::string name() const = 0;
  // grads[i] is the gradient of output i; returns one gradient per input edge
  // (undefined where the input needs none).
  virtual TensorList apply(const TensorList& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release() {}

  std::vector<Edge> next_edges;
  std::vector<OutputInfo> outputs;
  uint64_t sequence_nr = 0;  // creation order: later nodes run first
  // False: apply() gets undefined gradients for outputs the backward pass did
  // not reach, instead of zeros (a custom Function's set_materialize_grads(False)).
  bool materialize_grads = true;
  // Hooks on non-leaf tensors, by output index.
  std::map<uint32_t, std::vector<std::pair<int, Tensor::Hook>>> tensor_hooks;
  std::map<uint32_t, std::weak_ptr<TensorImpl>> retained;  // outputs with retain_grad()

  // Moves every node this one holds a reference to into `out`, leaving it
  // with nothing to release recursively.
  virtual void steal_children(std::vector<std::shared_ptr<Node>>& out);
};

// The backward of one op: saved tensors plus a vector-Jacobian product.
using Vjp = std::function<TensorList(const TensorList& grads, const TensorList& saved,
                                     const std::vector<bool>& needs_grad)>;

class FunctionNode : public Node {
 public:
  FunctionNode(std::string name, Vjp vjp) : name_(std::move(name)), vjp_(std::move(vjp)) {}
  std::string name() const override { return name_; }
  ~FunctionNode() override;
  TensorList apply(const TensorList& grads) override;
  void release() override;
  void steal_children(std::vector<std::shared_ptr<Node>>& out) override;

  std::vector<SavedTensor> saved;
  std::vector<bool> needs_grad;

 private:
  std::string name_;
  Vjp vjp_;
};

// Adds into a leaf's .grad.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) {}
  std::string name() const override { return "AccumulateGrad"; }
  TensorList apply(const TensorList& grads) override;
  const std::shared_ptr<TensorImpl>& leaf() const { return leaf_; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
  std::mutex mutex_;  // backward may run on several threads into one leaf
};

// True when grad mode is on and any defined input requires grad.
bool any_requires_grad(const TensorList& inputs);

// Records a node for an op: `outputs` get it as grad_fn and requires_grad.
// Call only when any_requires_grad(inputs). `saved` may include outputs.
// `name` is PyTorch-like: "MulBackward0". The first `n_hookable` saved
// tensors go through the saved-tensor hooks in force (a Python Function's ctx
// attributes, saved after its save_for_backward tensors, do not, as in torch).
void record(const char* name, const TensorList& inputs, const TensorList& outputs,
            const TensorList& saved, Vjp vjp, size_t n_hookable = SIZE_MAX);

// For in-place ops under autograd: `self` now holds `result` (undefined when
// it was overwritten with a constant) and takes over its history; when self is
// a view, its base's history is rewritten too.
void rebase_history(const Tensor& self, const Tensor& result);
// Throws PyTorch's error when `self` is a leaf requiring grad (or a view of
// one) and grad mode is on. Called by every in-place op before writing.
void check_inplace(const Tensor& self, const char* op);

// The edge a gradient for `t` flows along.
Edge gradient_edge(const Tensor& t);

}  // namespace ember::autograd
