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

 protected:
  int rank_;
  int size_;
};

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
