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
  bool wait_for(Milliseconds timeout) override;
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
  // Joins an idle worker. A busy one (a collective stuck on a dead peer, or
  // work still queued) is left to finish on its own: tasks hold what they
  // use, so destroying a group never waits for its timeout.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  std::shared_ptr<Work> push(std::function<void()> task);

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<std::function<void()>, std::shared_ptr<FutureWork>>> tasks;
    bool stopping = false;
    bool running = false;
  };
  static void loop(const std::shared_ptr<State>& state);
  std::shared_ptr<State> state_;
  std::thread worker_;
};

}  // namespace ember::distributed
