// The asynchrony of a process group: collectives run in order on one worker
// thread per group; each returns a Work the caller may wait on, which
// rethrows the exception the collective raised on the worker.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <ember/distributed/process_group.h>

namespace ember::distributed {

class FutureWork : public Work {
 public:
  void wait() override;
  bool is_completed() override;
  // Marks the work done (error: null on success) and wakes the waiters.
  void finish(std::exception_ptr error);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class WorkQueue {
 public:
  WorkQueue();
  // Runs what is queued, then joins the worker.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  std::shared_ptr<Work> push(std::function<void()> task);

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::function<void()>, std::shared_ptr<FutureWork>>> tasks_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace ember::distributed
