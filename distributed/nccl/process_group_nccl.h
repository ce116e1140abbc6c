// ProcessGroup over NCCL (CUDA tensors; CUDA + NCCL builds only).
//
// The communicator is created lazily, at the group's first collective, on
// that collective's device (as in PyTorch): rank 0 makes an ncclUniqueId and
// publishes it through the group's Store, every rank then calls
// ncclCommInitRank. Before that, the ranks meet in the Store, so a rank that
// never calls its first collective fails the others after the group's
// timeout instead of hanging in ncclCommInitRank. All later collectives must
// use tensors on that same device (one GPU per process).
//
// Ordering: each collective waits (on the GPU) for the work already queued on
// the device's current stream, runs on the group's own NCCL stream, and
// records an event that Work::wait() makes the current stream wait on. The
// host does not block, except in barrier() and with EMBER_NCCL_BLOCKING_WAIT=1.
//
// Failure behaviour: an NCCL call that fails raises ember::Error naming the
// collective, its sequence number, the rank, NCCL's error string and its last
// error message. A watchdog thread aborts the communicator of a collective
// still unfinished after the group's timeout; that collective and every later
// one on the group then raise an error naming it (see nccl_work.h).
//
// Tensors must be CUDA, contiguous, on the group's device, of a dtype NCCL
// carries (float32/64, float16, bfloat16, int32/64, uint8, int8).
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ember/distributed/process_group.h>

#include "nccl_work.h"

namespace ember::distributed::nccl {

class ProcessGroupNCCL : public ProcessGroup {
 public:
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options);
  ~ProcessGroupNCCL() override;
  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, int root) override;
  std::shared_ptr<Work> reduce(Tensor& tensor, int root, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input) override;
  std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) override;
  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input, int root) override;
  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs, int root) override;
  std::shared_ptr<Work> barrier() override;
  std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) override;
  std::shared_ptr<Work> recv(Tensor& tensor, int src, int tag) override;
  std::shared_ptr<Work> all_to_all(Tensor& output, const Tensor& input, const std::vector<int64_t>& output_splits,
                                   const std::vector<int64_t>& input_splits) override;
  // One grouped NCCL call for the whole batch; every message gets the same Work.
  std::vector<std::shared_ptr<Work>> batch_send_recv(const std::vector<P2PMessage>& messages) override;

 private:
  // The NCCL calls of one collective, issued on `stream`.
  using Body = std::function<void(ncclComm_t comm, cudaStream_t stream, const std::string& where)>;
  // Numbers the collective, creates the communicator on `device` if needed,
  // orders the NCCL stream after the current stream, runs body, records the
  // end event and hands the Work to the watchdog. `keep` stays alive until
  // the collective has finished on the GPU.
  std::shared_ptr<Work> run(const char* name, int device, std::vector<Tensor> keep, Body body,
                            bool blocking = false);
  std::shared_ptr<Comm> comm_for(int device, const std::string& where);
  std::shared_ptr<Comm> create_comm(int device, const std::string& where);
  // The device every tensor of a call must be on: the communicator's once it
  // exists, else the first tensor's.
  int device_for(const Tensor& t, const char* op);
  void check_tensor(const Tensor& t, int device, const char* op, const char* what);
  void check_root(int root, const char* op) const;

  std::shared_ptr<Store> store_;
  Milliseconds timeout_;
  bool blocking_wait_;
  std::mutex issue_mu_;  // guards seq_ and comm_, and keeps collectives in sequence order
  int64_t seq_ = 0;
  std::shared_ptr<Comm> comm_;
  std::string init_error_;  // why creating the communicator failed: later calls fail the same way
  Watchdog watchdog_;
};

}  // namespace ember::distributed::nccl
