#include "work_queue.h"

namespace ember::distributed {

void FutureWork::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_; });
  if (error_) std::rethrow_exception(error_);
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

WorkQueue::WorkQueue() : worker_([this] { loop(); }) {}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::shared_ptr<Work> WorkQueue::push(std::function<void()> task) {
  auto work = std::make_shared<FutureWork>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.emplace_back(std::move(task), work);
  }
  cv_.notify_all();
  return work;
}

void WorkQueue::loop() {
  for (;;) {
    std::function<void()> task;
    std::shared_ptr<FutureWork> work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front().first);
      work = std::move(tasks_.front().second);
      tasks_.pop_front();
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
