#include "work_queue.h"

namespace ember::distributed {

void FutureWork::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

bool FutureWork::wait_for(Milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return done_; })) return false;
  if (error_) std::rethrow_exception(error_);
  return true;
}

bool FutureWork::is_completed() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

void FutureWork::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

WorkQueue::WorkQueue() : state_(std::make_shared<State>()) {
  worker_ = std::thread([state = state_] { loop(state); });
}

WorkQueue::~WorkQueue() {
  bool busy;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
    busy = state_->running || !state_->tasks.empty();
  }
  state_->cv.notify_all();
  if (busy)
    worker_.detach();
  else
    worker_.join();
}

std::shared_ptr<Work> WorkQueue::push(std::function<void()> task) {
  auto work = std::make_shared<FutureWork>();
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->tasks.emplace_back(std::move(task), work);
  }
  state_->cv.notify_all();
  return work;
}

void WorkQueue::loop(const std::shared_ptr<State>& state) {
  for (;;) {
    std::function<void()> task;
    std::shared_ptr<FutureWork> work;
    {
      std::unique_lock<std::mutex> lock(state->mu);
      state->running = false;
      state->cv.wait(lock, [&] { return state->stopping || !state->tasks.empty(); });
      if (state->tasks.empty()) return;  // stopping, and nothing left to run
      task = std::move(state->tasks.front().first);
      work = std::move(state->tasks.front().second);
      state->tasks.pop_front();
      state->running = true;
    }
    std::exception_ptr error;
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
    // Let go of the task's tensors before the waiter wakes up: freeing one
    // may need the waiter's lock (a numpy array's GIL).
    task = nullptr;
    work->finish(error);
  }
}

}  // namespace ember::distributed
