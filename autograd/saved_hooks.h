// Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): while a pair
// is in force, every tensor an op saves for backward is handed to `pack` as the
// op records its node, and only what pack returned is kept; backward asks
// `unpack` for the tensor each time it needs it. save_on_cpu is such a pair.
//
// The stack is thread-local (ops record on the thread that runs them) and
// checked once per recorded node: while no thread has hooks pushed, that check
// is one relaxed atomic load (see autograd/packed_save.h).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <ember/core/tensor.h>

namespace ember::autograd {

// What a pack hook returned. Its deleter knows how to let it go (the Python
// binding's takes the GIL), since backward frees it on its own thread.
using PackedValue = std::shared_ptr<void>;

struct SavedTensorHooks {
  std::function<PackedValue(const Tensor&)> pack;
  std::function<Tensor(const PackedValue&)> unpack;
};

// Pushes a pair; the innermost one applies. Raises Error with the message of
// disable_saved_tensor_hooks while that is in force. A null entry means "no
// hooks in this scope" and is always allowed (activation checkpointing runs
// its block under one: the block's graph is dropped, so packing it is waste).
void push_saved_tensor_hooks(std::shared_ptr<const SavedTensorHooks> hooks);
void pop_saved_tensor_hooks();
// The pair in force on this thread, or null.
const std::shared_ptr<const SavedTensorHooks>& current_saved_tensor_hooks();

// While set, pushing hooks raises Error(message); setting it while hooks are
// in force raises at once (after setting it, as torch). enable clears it.
void disable_saved_tensor_hooks(const std::string& message);
void enable_saved_tensor_hooks();
std::optional<std::string> saved_tensor_hooks_disabled_message();

// RAII push/pop.
class SavedTensorHooksGuard {
 public:
  explicit SavedTensorHooksGuard(std::shared_ptr<const SavedTensorHooks> hooks) {
    push_saved_tensor_hooks(std::move(hooks));
  }
  ~SavedTensorHooksGuard() { pop_saved_tensor_hooks(); }
  SavedTensorHooksGuard(const SavedTensorHooksGuard&) = delete;
  SavedTensorHooksGuard& operator=(const SavedTensorHooksGuard&) = delete;
};

}  // namespace ember::autograd
