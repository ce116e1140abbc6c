// The asynchrony of the NCCL process group: what a collective's Work holds,
// the communicator state the Works share, and the watchdog thread that
// retires finished Works and aborts a communicator stuck past the timeout.
//
// A collective runs on the group's NCCL stream; its Work owns an event
// recorded there after it. wait() makes the device's current stream wait on
// that event (the host does not block, as in PyTorch) unless the Work is
// blocking (barrier, or EMBER_NCCL_BLOCKING_WAIT=1), in which case the host
// waits for the event. The Work keeps the collective's tensors alive until
// the event has fired, so the caching allocator cannot hand their memory to
// other kernels while NCCL still reads or writes it.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <ember/distributed/process_group.h>

namespace ember::distributed::nccl {

using Clock = std::chrono::steady_clock;

// One communicator (one device) of a group, shared by its Works and the watchdog.
struct Comm {
  ncclComm_t comm = nullptr;
  int device = 0;
  int rank = 0;
  int size = 0;
  Milliseconds timeout{};
  cudaStream_t stream = nullptr;  // the group's NCCL stream
  cudaEvent_t ready = nullptr;    // recorded on the compute stream before each collective

  // Held while NCCL calls are issued on `comm`, so that the watchdog does not
  // abort it under a call (unless that call itself hangs past the timeout).
  std::mutex issue_mu;
  std::atomic<int64_t> issuing_since_ms{0};  // steady-clock ms of the call in flight; 0: none

  ~Comm();  // destroys the communicator, or leaves an aborted one alone
  // Empty while usable; else why not (the first failure).
  std::string broken();
  void mark_broken(const std::string& msg);
  // Marks the communicator broken with `msg` and aborts it (once).
  void abort(const std::string& msg);
  bool aborted();
  // Tensors of failed collectives: NCCL may still touch them.
  void bury(std::vector<Tensor> tensors);

 private:
  std::mutex state_mu_;
  std::string broken_;
  bool aborted_ = false;
  std::vector<Tensor> graveyard_;
};

int64_t now_ms();

class NCCLWork : public Work {
 public:
  NCCLWork(std::shared_ptr<Comm> comm, std::string where, std::vector<Tensor> keep, bool blocking);
  ~NCCLWork() override;
  void wait() override;
  bool wait_for(Milliseconds timeout) override;
  bool is_completed() override;

  // Hands over the event recorded after the collective (the Work owns it).
  void set_end_event(cudaEvent_t end);
  // True once finished, well or not (then error() says why). Releases the
  // tensors at completion. Called by the watchdog and by the waiters.
  bool poll();
  std::string error();
  const std::string& where() const { return where_; }
  Comm& comm() { return *comm_; }
  Clock::time_point started() const { return started_; }

 private:
  void rethrow();  // mu_ not held

  std::shared_ptr<Comm> comm_;
  const std::string where_;  // "all_reduce #3 on rank 0 of 2"
  const bool blocking_;
  const Clock::time_point started_;
  std::mutex mu_;
  cudaEvent_t end_ = nullptr;
  std::vector<Tensor> keep_;
  bool done_ = false;
  std::string error_;
};

// Polls the group's unfinished Works every 100 ms: finished ones release
// their tensors; one unfinished past the group's timeout aborts its
// communicator (ncclCommAbort), so that its kernels exit and every Work of
// that communicator fails with a message naming the collective.
class Watchdog {
 public:
  Watchdog();
  ~Watchdog();  // stops and joins the thread; unfinished Works keep their tensors
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void add(std::shared_ptr<NCCLWork> work);
  // True when a Work added here has not finished yet.
  bool has_unfinished();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::shared_ptr<NCCLWork>> works;
    bool stopping = false;
  };
  static void loop(const std::shared_ptr<State>& state);
  // True once `work` finished; aborts its communicator past the timeout.
  static bool check(NCCLWork& work);
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace ember::distributed::nccl
