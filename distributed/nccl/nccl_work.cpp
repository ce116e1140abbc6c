#include "nccl_work.h"
#include "nccl_api.h"

#include <algorithm>
#include <cstdio>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/error.h>

namespace ember::distributed::nccl {

int64_t now_ms() {
  return std::chrono::duration_cast<Milliseconds>(Clock::now().time_since_epoch()).count();
}

// ---- Comm

Comm::~Comm() {
  // At process exit the CUDA runtime may already be gone: then leave it all.
  const cudaError_t alive = stream ? cudaStreamQuery(stream) : cudaSuccess;
  if (alive == cudaErrorCudartUnloading || alive == cudaErrorContextIsDestroyed) return;
  cudaGetLastError();
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(device);
  // An aborted communicator is already freed. The group's destructor lets
  // queued collectives end first, so destroying waits on no peer; a broken
  // one (a failed call, maybe a dead peer) is aborted instead.
  if (comm && !aborted_) {
    if (broken_.empty())
      nccl::api().CommDestroy(comm);
    else
      nccl::api().CommAbort(comm);
  }
  if (ready) cudaEventDestroy(ready);
  if (stream) cudaStreamDestroy(stream);
  if (previous >= 0) cudaSetDevice(previous);
  cudaGetLastError();
}

std::string Comm::broken() {
  std::lock_guard<std::mutex> lock(state_mu_);
  return broken_;
}

void Comm::mark_broken(const std::string& msg) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (broken_.empty()) broken_ = msg;
}

bool Comm::aborted() {
  std::lock_guard<std::mutex> lock(state_mu_);
  return aborted_;
}

void Comm::abort(const std::string& msg) {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (broken_.empty()) broken_ = msg;
    if (aborted_ || !comm) return;
    aborted_ = true;
  }
  // ncclCommAbort makes the communicator's kernels exit and unblocks a host
  // call stuck in it; the communicator is freed and never used again.
  nccl::api().CommAbort(comm);
}

void Comm::bury(std::vector<Tensor> tensors) {
  std::lock_guard<std::mutex> lock(state_mu_);
  for (Tensor& t : tensors) graveyard_.push_back(std::move(t));
}

// ---- NCCLWork

NCCLWork::NCCLWork(std::shared_ptr<Comm> comm, std::string where, std::vector<Tensor> keep, bool blocking)
    : comm_(std::move(comm)), where_(std::move(where)), blocking_(blocking), started_(Clock::now()),
      keep_(std::move(keep)) {}

NCCLWork::~NCCLWork() {
  if (!done_ && !keep_.empty()) {
    if (end_ && !comm_->aborted()) {
      cudaEventSynchronize(end_);  // the collective is running and will end: let it
    } else {
      // Aborted or never issued in full: NCCL may still touch the memory, so
      // it is never returned to the allocator.
      new std::vector<Tensor>(std::move(keep_));
    }
  }
  if (end_) cudaEventDestroy(end_);
}

void NCCLWork::set_end_event(cudaEvent_t end) {
  std::lock_guard<std::mutex> lock(mu_);
  end_ = end;
}

bool NCCLWork::poll() {
  std::lock_guard<std::mutex> lock(mu_);
  if (done_) return true;
  const std::string broken = comm_->broken();
  if (!broken.empty()) {
    error_ = broken.rfind(where_, 0) == 0
                 ? broken
                 : str(where_, " did not complete: the NCCL communicator failed earlier: ", broken);
    comm_->bury(std::move(keep_));
    keep_.clear();
    done_ = true;
    return true;
  }
  if (!end_) return false;  // still being issued
  const cudaError_t e = cudaEventQuery(end_);
  if (e == cudaErrorNotReady) return false;
  cudaGetLastError();
  if (e == cudaSuccess) {
    keep_.clear();  // NCCL is done with them: the allocator may reuse their memory
  } else {
    error_ = str(where_, " failed on the GPU: ", cudaGetErrorString(e));
    comm_->mark_broken(error_);
    comm_->bury(std::move(keep_));
    keep_.clear();
  }
  done_ = true;
  return true;
}

std::string NCCLWork::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void NCCLWork::rethrow() {
  const std::string e = error();
  if (!e.empty()) throw Error(e);
}

bool NCCLWork::is_completed() { return poll(); }

void NCCLWork::wait() {
  while (!wait_for(Milliseconds(100))) {
  }
}

bool NCCLWork::wait_for(Milliseconds timeout) {
  if (blocking_) {
    // The host waits; the watchdog ends a collective stuck past the group's
    // timeout, which then fails here.
    const auto deadline = Clock::now() + timeout;
    while (!poll()) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    rethrow();
    return true;
  }
  const bool done = poll();
  rethrow();
  if (!done) {
    cudaEvent_t end;
    {
      std::lock_guard<std::mutex> lock(mu_);
      end = end_;
    }
    // Later work on the current stream runs after the collective.
    cuda::DeviceGuard guard(comm_->device);
    EMBER_CUDA_CHECK(cudaStreamWaitEvent(cuda::current_cuda_stream(comm_->device), end, 0));
  }
  return true;
}

// ---- Watchdog

Watchdog::Watchdog() : state_(std::make_shared<State>()) {
  thread_ = std::thread([state = state_] { loop(state); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  thread_.join();
}

void Watchdog::add(std::shared_ptr<NCCLWork> work) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->works.push_back(std::move(work));
}

bool Watchdog::has_unfinished() {
  std::vector<std::shared_ptr<NCCLWork>> works;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    works = state_->works;
  }
  return std::any_of(works.begin(), works.end(), [](const auto& w) { return !w->poll(); });
}

bool Watchdog::check(NCCLWork& work) {
  if (work.poll()) return true;
  Comm& c = work.comm();
  if (Clock::now() - work.started() < c.timeout) return false;
  // Abort only between NCCL calls, unless the call in flight itself hangs
  // past the timeout (aborting is then the way to unblock it).
  const bool locked = c.issue_mu.try_lock();
  if (!locked) {
    const int64_t since = c.issuing_since_ms.load();
    if (since == 0 || now_ms() - since < c.timeout.count()) return false;
  }
  const std::string msg =
      str(work.where(), " timed out after ", c.timeout.count(),
          " ms, so the watchdog aborted the NCCL communicator (ncclCommAbort): a peer may have exited or hung, or "
          "the ranks called different collectives; this group is unusable now (NCCL_DEBUG=INFO shows NCCL's view)");
  std::fprintf(stderr, "[ember nccl watchdog] %s\n", msg.c_str());
  c.abort(msg);
  if (locked) c.issue_mu.unlock();
  return work.poll();
}

void Watchdog::loop(const std::shared_ptr<State>& state) {
  std::unique_lock<std::mutex> lock(state->mu);
  while (!state->stopping) {
    state->cv.wait_for(lock, Milliseconds(100));
    if (state->stopping) break;
    std::vector<std::shared_ptr<NCCLWork>> works = state->works;
    lock.unlock();
    std::vector<NCCLWork*> done;
    for (const auto& w : works) {
      try {
        if (check(*w)) done.push_back(w.get());
      } catch (...) {  // a CUDA error in a query: the waiters see it
      }
    }
    works.clear();  // the last reference, if any, is dropped without the lock
    lock.lock();
    std::vector<std::shared_ptr<NCCLWork>> finished;
    auto& list = state->works;
    auto it = std::stable_partition(list.begin(), list.end(), [&](const auto& w) {
      return std::find(done.begin(), done.end(), w.get()) == done.end();
    });
    finished.assign(std::make_move_iterator(it), std::make_move_iterator(list.end()));
    list.erase(it, list.end());
    lock.unlock();
    finished.clear();  // Works (and their tensors) freed outside the lock
    lock.lock();
  }
}

}  // namespace ember::distributed::nccl
