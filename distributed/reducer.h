// The gradient reducer behind DistributedDataParallel. Parameters are packed
// into flat buckets (reverse registration order, which approximates the
// order backward produces gradients; one dtype and device per bucket). A
// post-accumulate-grad hook copies each gradient into its bucket as soon as
// backward has written it; a full bucket is all-reduced at once,
// asynchronously, so communication overlaps the rest of backward. When the
// backward pass finishes (a queued engine callback) the reducer waits for
// every bucket and writes the averaged gradients back into .grad.
//
// Usage, per iteration: forward, then prepare_for_backward(outputs), then
// backward. A backward without prepare_for_backward only accumulates locally
// (DistributedDataParallel.no_sync); the next synchronized backward reduces
// the accumulated gradients.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/distributed/process_group.h>

namespace ember::distributed {

struct ReducerOptions {
  // PyTorch's defaults: a small first bucket so communication starts early.
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  int64_t first_bucket_cap_bytes = 1024 * 1024;
  // Parameters the forward did not use are found by walking the outputs'
  // graph and reduced with a zero contribution. When false, a parameter
  // that gets no gradient makes the end of backward raise.
  bool find_unused_parameters = false;
  // .grad becomes a view into its bucket (no copy back after the reduction).
  bool gradient_as_bucket_view = false;
};

// Bucket assignment: indices into `params`, in the order given, grouped by
// dtype and device and cut when a bucket reaches its cap (the first bucket of
// each dtype gets `first_cap_bytes`, the others `cap_bytes`). Buckets are
// ordered by their first parameter.
std::vector<std::vector<size_t>> compute_bucket_assignment(const std::vector<Tensor>& params,
                                                           const std::vector<size_t>& order,
                                                           int64_t first_cap_bytes, int64_t cap_bytes);

class Reducer {
 public:
  // `names` (optional, one per parameter) appear in error messages.
  Reducer(std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, ReducerOptions options = {},
          std::vector<std::string> names = {});
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Arms the hooks for the next backward. `outputs` are the forward's
  // outputs (only read with find_unused_parameters).
  void prepare_for_backward(const std::vector<Tensor>& outputs);

  // Parameter indices of each bucket, in buffer order.
  std::vector<std::vector<size_t>> bucket_indices() const;
  // Parameters found unused by the last prepare_for_backward.
  std::vector<size_t> unused_parameters() const;
  const std::shared_ptr<ProcessGroup>& group() const { return group_; }

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // element offset of each parameter in buffer
    Tensor buffer;                 // flat, contiguous
    size_t pending = 0;            // parameters not ready yet this iteration
    std::shared_ptr<Work> work;
  };
  struct Slot {
    size_t bucket = 0;
    size_t position = 0;  // index into the bucket's params
  };

  void on_gradient(size_t index);
  void find_unused(const std::vector<Tensor>& outputs);
  void mark_ready(size_t index);
  void copy_into_bucket(size_t index);
  Tensor bucket_view(size_t index) const;
  void launch_ready_buckets();
  void finalize();
  void write_back(const std::vector<float>& global_use);
  void abandon_iteration();
  std::string describe(const std::vector<size_t>& indices) const;

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<ProcessGroup> group_;
  ReducerOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<Slot> slots_;
  std::vector<int> hook_ids_;
  std::vector<Tensor> views_;  // gradient_as_bucket_view: each parameter's piece of its bucket

  // Per-iteration state, guarded by mutex_.
  mutable std::mutex mutex_;
  bool expect_hooks_ = false;  // between prepare_for_backward and the end of backward
  bool callback_queued_ = false;
  size_t next_bucket_ = 0;  // buckets are launched in order on every rank
  std::vector<bool> ready_;
  std::vector<bool> used_;  // got a gradient from this backward
  std::vector<size_t> unused_;
};

}  // namespace ember::distributed
