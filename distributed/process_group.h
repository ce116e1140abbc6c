// One interface over the collective engines: gloo for CPU tensors, NCCL for
// CUDA tensors. Every collective is queued and returns a Work at once; wait()
// blocks until it is done and raises what went wrong there (a peer that died,
// the group's timeout, mismatched collectives).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/distributed/store.h>

namespace ember::distributed {

enum class ReduceOp { Sum, Avg, Product, Min, Max };
std::string to_string(ReduceOp op);

// Backends move and reduce a complex tensor as the pairs of reals it holds
// (its view_as_real, without autograd): right for Sum and Avg, which
// check_complex_reduce requires, as PyTorch does.
Tensor as_reals(const Tensor& t);
void check_complex_reduce(ReduceOp op, const char* name);

class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the collective finished; rethrows its error.
  virtual void wait() = 0;
  virtual bool is_completed() = 0;
  // Waits at most `timeout`; true when done (rethrowing its error). Lets
  // Python wake up for Ctrl-C while a collective is stuck.
  virtual bool wait_for(Milliseconds timeout) {
    (void)timeout;
    wait();
    return true;
  }
};

// One message of a batch_send_recv (torch.distributed.P2POp).
struct P2PMessage {
  bool is_send = true;
  Tensor tensor;
  int peer = 0;  // group rank
  int tag = 0;
};

struct ProcessGroupOptions {
  Milliseconds timeout = kDefaultTimeout;
  // Where the rendezvous store lives, when known ("127.0.0.1" keeps gloo's
  // transport on loopback); empty: the backend picks an interface itself.
  std::string master_addr;
};

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend() const = 0;

  // In place on `tensor`.
  virtual std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) = 0;
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, int root) = 0;
  // Result lands on `root` only.
  virtual std::shared_ptr<Work> reduce(Tensor& tensor, int root, ReduceOp op) = 0;
  // outputs: size() tensors shaped like input.
  virtual std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input) = 0;
  // output: size() * input.numel() elements, rank-major.
  virtual std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input) = 0;
  // input: size() * output.numel() elements; rank r gets the reduced r-th chunk.
  virtual std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) = 0;
  // outputs used on `root` only (size() tensors shaped like input).
  virtual std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input, int root) = 0;
  // inputs used on `root` only (size() tensors shaped like output).
  virtual std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs, int root) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;
  virtual std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) = 0;
  virtual std::shared_ptr<Work> recv(Tensor& tensor, int src, int tag) = 0;
  // Dim 0 of input is cut into size() parts of input_splits[r] rows (equal
  // parts when empty); part r goes to rank r, and what rank r sends here lands
  // in output's r-th part (output_splits[r] rows). Backends without it raise
  // NotImplementedError.
  virtual std::shared_ptr<Work> all_to_all(Tensor& output, const Tensor& input,
                                           const std::vector<int64_t>& output_splits,
                                           const std::vector<int64_t>& input_splits);
  // Posts every send and recv of `messages` together (one Work per message):
  // a backend whose sends block until matched (NCCL) groups them so that any
  // order of the list on the peers cannot deadlock. Default: send/recv each.
  virtual std::vector<std::shared_ptr<Work>> batch_send_recv(const std::vector<P2PMessage>& messages);

 protected:
  int rank_;
  int size_;
};

// all_to_all's element counts per rank for `t` cut along dim 0 by `splits`
// (rows per rank; equal parts when empty), checked: `what` names t in errors.
std::vector<int64_t> all_to_all_counts(const Tensor& t, const std::vector<int64_t>& splits, int size,
                                       const char* what);

// Builds the backend's group ("gloo" or "nccl"); raises when this build lacks it.
std::shared_ptr<ProcessGroup> make_process_group(const std::string& backend, std::shared_ptr<Store> store,
                                                 int rank, int size, ProcessGroupOptions options = {});
// The backends this build has, for error messages and ember.distributed.is_*_available().
bool gloo_available();
bool nccl_available();
// The NCCL library's version as loaded now (22803 = 2.28.3), loading it on
// first call; raises when this build has no NCCL or the library cannot load.
int nccl_runtime_version();

}  // namespace ember::distributed
