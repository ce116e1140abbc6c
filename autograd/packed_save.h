// What a SavedTensor keeps under saved-tensor hooks (private to node.cpp, so
// changing it rebuilds one file).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include <ember/autograd/node.h>
#include <ember/autograd/saved_hooks.h>

namespace ember::autograd {

// Hook pairs pushed on all threads together (saved_hooks.cpp). While it is
// zero, recording a node skips even the thread-local lookup: one relaxed load.
extern std::atomic<int64_t> g_saved_tensor_hook_entries;
inline bool any_saved_tensor_hooks() { return g_saved_tensor_hook_entries.load(std::memory_order_relaxed) != 0; }

// What a SavedTensor keeps under hooks: the packed value, the pair that
// unpacks it, what the unpacked tensor must look like, and the autograd
// identity the tensor had (its grad_fn, or a leaf's accumulator) so gradients
// of a double backward still reach it.
struct PackedSave {
  std::shared_ptr<const SavedTensorHooks> hooks;
  PackedValue value;
  Shape shape;
  DType dtype = DType::Float32;
  Device device;
  // The tensor that was saved, while alive: an unpacked tensor that shares its
  // storage is checked against the saved version (a snapshot is not).
  std::weak_ptr<TensorImpl> original;
  std::shared_ptr<Node> grad_fn;      // inputs with a history
  std::shared_ptr<Node> accumulator;  // leaves requiring grad
};

}  // namespace ember::autograd
