// ProcessGroup over gloo (CPU tensors): a full mesh of TCP pairs set up
// through the group's Store, collectives run in order on the group's worker
// thread, point-to-point messages on threads of their own (a send and the
// matching receive may be posted in either order on the two ranks).
//
// Failure behaviour: every gloo call gets the group's timeout; a peer that
// exits or never calls the collective makes it raise ember::Error naming
// the collective, its sequence number, this rank, the group size and the
// timeout. After a failure the group refuses further collectives.
// Destroying a group whose worker is stuck does not wait for the timeout:
// the worker owns what it uses (Comm) and ends on its own.
//
// Mismatch detection: each collective's gloo tag is a hash of its
// (sequence number, kind, dtype, numel, root, reduce op), so ranks that call
// different collectives never exchange data (they time out instead of
// corrupting memory). With EMBER_DISTRIBUTED_DEBUG=DETAIL every collective
// first all-gathers that fingerprint and raises at once on every rank,
// describing what each disagreeing rank called.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ember/distributed/process_group.h>

#include "work_queue.h"

namespace gloo {
class Context;
}

namespace ember::distributed {

// What a collective is, as every rank should agree on it.
struct CollectiveInfo {
  int kind = 0;  // index into the collective names
  int64_t seq = 0;
  int dtype = -1;
  int64_t numel = 0;  // -1: may differ between ranks (all_to_all)
  int root = -1;
  int reduce = -1;
  const char* name() const;
  std::string describe() const;  // "all_reduce(float32, numel=4, op=SUM)"
  uint32_t tag() const;          // hash of every field
};

class ProcessGroupGloo : public ProcessGroup {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options);
  ~ProcessGroupGloo() override;
  std::string backend() const override { return "gloo"; }

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

 private:
  struct Comm;  // what the worker thread uses; shared, so a stuck worker may outlive the group
  // Queues body on the worker, wrapped with the fingerprint check and the
  // translation of gloo's exceptions; `keep` stays alive while it runs (and
  // for the group's life if it fails: gloo may still write into it).
  std::shared_ptr<Work> enqueue(CollectiveInfo info, std::vector<Tensor> keep,
                                std::function<void(const CollectiveInfo&, Comm&)> body);
  std::shared_ptr<Work> point_to_point(bool is_send, Tensor tensor, Tensor staged, int peer, int tag);
  CollectiveInfo info_for(int kind, const Tensor* t = nullptr);  // all but seq

  std::shared_ptr<Comm> comm_;
  std::mutex issue_mu_;  // guards seq_ and the order of queue_
  int64_t seq_ = 0;      // next collective's sequence number
  struct PendingP2P;
  std::mutex p2p_mu_;
  std::vector<std::unique_ptr<PendingP2P>> p2p_;  // point-to-point waiters
  WorkQueue queue_;  // last: stopped first on destruction
};

}  // namespace ember::distributed
