// The DDP reducer from C++, with fake process groups: one that records calls
// and stands for N identical ranks, and one that runs N ranks as threads of
// this process so their gradients really differ.
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <ember/autograd/grad_mode.h>
#include <ember/distributed/reducer.h>

#include "util.h"

using namespace ember;
using namespace ember::distributed;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

// The base of the fakes: only all_reduce is needed by the reducer.
class FakeGroupBase : public ProcessGroup {
 public:
  using ProcessGroup::ProcessGroup;
  std::string backend() const override { return "fake"; }
  std::shared_ptr<Work> broadcast(Tensor&, int) override { return unsupported(); }
  std::shared_ptr<Work> reduce(Tensor&, int, distributed::ReduceOp) override { return unsupported(); }
  std::shared_ptr<Work> all_gather(std::vector<Tensor>&, const Tensor&) override { return unsupported(); }
  std::shared_ptr<Work> all_gather_into_tensor(Tensor&, const Tensor&) override { return unsupported(); }
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor&, const Tensor&, distributed::ReduceOp) override { return unsupported(); }
  std::shared_ptr<Work> gather(std::vector<Tensor>&, const Tensor&, int) override { return unsupported(); }
  std::shared_ptr<Work> scatter(Tensor&, const std::vector<Tensor>&, int) override { return unsupported(); }
  std::shared_ptr<Work> barrier() override { return unsupported(); }
  std::shared_ptr<Work> send(const Tensor&, int, int) override { return unsupported(); }
  std::shared_ptr<Work> recv(Tensor&, int, int) override { return unsupported(); }

 private:
  static std::shared_ptr<Work> unsupported() { throw NotImplementedError("fake group: not needed here"); }
};

// A work that runs `finish` on first wait(): results appear only after the
// reducer waits, as with a real asynchronous collective.
class DeferredWork : public Work {
 public:
  explicit DeferredWork(std::function<void()> finish) : finish_(std::move(finish)) {}
  void wait() override {
    if (finish_) finish_();
    finish_ = nullptr;
  }
  bool is_completed() override { return !finish_; }

 private:
  std::function<void()> finish_;
};

// Stands for `size` ranks with identical gradients: the sum is size * input.
class RecordingGroup : public FakeGroupBase {
 public:
  struct Call {
    int64_t numel;
    DType dtype;
    distributed::ReduceOp op;
    std::vector<double> input;
  };
  using FakeGroupBase::FakeGroupBase;
  std::vector<Call> calls;

  std::shared_ptr<Work> all_reduce(Tensor& tensor, distributed::ReduceOp op) override {
    calls.push_back({tensor.numel(), tensor.dtype(), op, to_vector(tensor)});
    Tensor t = tensor;
    const int n = size();
    return std::make_shared<DeferredWork>([t, n]() mutable {
      autograd::NoGradGuard no_grad;
      t.mul_(scalar_tensor(n, t.dtype()));
    });
  }
};

// N ranks as threads: collective k of every rank meets collective k of the
// others; the last to arrive writes the sum into all of them.
struct Meeting {
  explicit Meeting(int size) : size(size) {}
  int size;
  std::mutex mutex;
  std::condition_variable cv;
  struct Round {
    std::vector<Tensor> tensors;
    bool done = false;
  };
  std::map<int64_t, Round> rounds;
};

class ThreadGroup : public FakeGroupBase {
 public:
  ThreadGroup(int rank, std::shared_ptr<Meeting> meeting)
      : FakeGroupBase(rank, meeting->size), meeting_(std::move(meeting)) {}

  std::shared_ptr<Work> all_reduce(Tensor& tensor, distributed::ReduceOp op) override {
    EMBER_CHECK(op == distributed::ReduceOp::Sum, Error, "ThreadGroup sums only");
    const int64_t k = seq_++;
    auto m = meeting_;
    {
      std::lock_guard<std::mutex> lock(m->mutex);
      auto& round = m->rounds[k];
      round.tensors.push_back(tensor);
      if (static_cast<int>(round.tensors.size()) == m->size) {
        autograd::NoGradGuard no_grad;
        Tensor sum = round.tensors[0].clone();
        for (int r = 1; r < m->size; ++r) sum.add_(round.tensors[r]);
        for (auto& t : round.tensors) t.copy_(sum);
        round.done = true;
        m->cv.notify_all();
      }
    }
    return std::make_shared<DeferredWork>([m, k] {
      std::unique_lock<std::mutex> lock(m->mutex);
      const bool done = m->cv.wait_for(lock, std::chrono::seconds(10), [&] { return m->rounds[k].done; });
      if (!done) throw Error("ThreadGroup: collective timed out");
    });
  }

 private:
  std::shared_ptr<Meeting> meeting_;
  int64_t seq_ = 0;
};

Tensor param(const std::vector<double>& v, const Shape& shape, DType dtype = DType::Float64) {
  Tensor t = values(v, shape, dtype);
  t.requires_grad_(true);
  return t;
}

// A tiny model: loss = mean((x @ w + b)^2) over the rows of x.
struct Model {
  Tensor w = param({0.5, -1, 2, 0.25, 1, -0.5}, {3, 2});
  Tensor b = param({0.1, -0.2}, {2});
  std::vector<Tensor> params() const { return {w, b}; }
  Tensor loss(const Tensor& x) const { return x.matmul(w).add(b).square().mean(); }
};

Tensor batch() {
  return values({1, 2, 3, -1, 0, 2, 0.5, 0.5, -2, 3, 1, 1, -1, -1, 0, 2, -3, 1, 0, 1, 1, 4, 2, 0}, {8, 3},
                DType::Float64);
}

// Runs `body(rank, group)` on `size` threads and rethrows the first failure.
void run_ranks(int size, const std::function<void(int, std::shared_ptr<ProcessGroup>)>& body) {
  auto meeting = std::make_shared<Meeting>(size);
  std::vector<std::exception_ptr> errors(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, std::make_shared<ThreadGroup>(r, meeting));
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace

TEST_CASE("bucket assignment: reverse order, small first bucket, one dtype per bucket", "[reducer]") {
  std::vector<Tensor> ps{zeros({4}), zeros({4}), zeros({2}, DType::Float64), zeros({8}), zeros({1})};
  const std::vector<size_t> order{4, 3, 2, 1, 0};
  // float32 caps: first 20 bytes (5 floats), then 32 bytes (8 floats).
  auto buckets = compute_bucket_assignment(ps, order, 20, 32);
  REQUIRE(buckets == std::vector<std::vector<size_t>>{{4, 3}, {2}, {1, 0}});
  // Every parameter over the cap: one bucket each.
  buckets = compute_bucket_assignment(ps, order, 1, 1);
  REQUIRE(buckets.size() == 5);
  // Default caps (1 MiB first): all float32 parameters share one bucket.
  buckets = compute_bucket_assignment(ps, order, 1 << 20, 25 << 20);
  REQUIRE(buckets == std::vector<std::vector<size_t>>{{4, 3, 1, 0}, {2}});
}

TEST_CASE("reducer averages gradients in buckets and overlaps them with backward", "[reducer]") {
  auto group = std::make_shared<RecordingGroup>(0, 4);
  Tensor p0 = param({1, 2}, {2});
  Tensor p1 = param({3}, {1});
  Tensor p2 = param({-1, 1}, {2}, DType::Float32);
  ReducerOptions o;
  o.first_bucket_cap_bytes = 1;  // every float64 parameter gets its own bucket
  o.bucket_cap_bytes = 1;
  Reducer reducer({p0, p1, p2}, group, o, {"p0", "p1", "p2"});
  REQUIRE(reducer.bucket_indices() == std::vector<std::vector<size_t>>{{2}, {1}, {0}});

  // p0 is used first in forward, so its gradient comes last in backward.
  Tensor x = values({1, 1}, {2}, DType::Float64);
  Tensor h = x.mul(p0);
  size_t calls_before_p0 = 0;
  h.register_hook([&](const Tensor&) {
    calls_before_p0 = group->calls.size();
    return Tensor();
  });
  Tensor loss = h.mul(p1).sum().add(p2.to(DType::Float64).mul(scalar_tensor(5.0)).sum());
  reducer.prepare_for_backward({loss});
  loss.backward();
  REQUIRE(calls_before_p0 == 2);  // p2's and p1's buckets were sent before p0's gradient existed
  REQUIRE(group->calls.size() == 3);
  REQUIRE(group->calls[0].dtype == DType::Float32);
  REQUIRE(group->calls[0].op == distributed::ReduceOp::Sum);
  REQUIRE(group->calls[1].input == std::vector<double>{3});  // d/dp1 = sum(x * p0)
  REQUIRE(group->calls[2].input == std::vector<double>{3, 3});
  // Four identical ranks: the average is the local gradient.
  require_values(p0.grad(), {3, 3});
  require_values(p1.grad(), {3});
  require_values(p2.grad(), {5, 5});

  // A backward without prepare_for_backward (no_sync) only accumulates.
  x.mul(p0).mul(p1).sum().backward();
  REQUIRE(group->calls.size() == 3);
  require_values(p0.grad(), {6, 6});
}

TEST_CASE("reducer over 2 and 4 ranks equals one process on the whole batch", "[reducer]") {
  Model single;
  single.loss(batch()).backward();
  for (int size : {2, 4}) {
    for (bool as_view : {false, true}) {
      INFO("world size " << size << ", gradient_as_bucket_view " << as_view);
      std::vector<std::vector<std::vector<double>>> grads(size);
      run_ranks(size, [&](int rank, std::shared_ptr<ProcessGroup> group) {
        Model m;
        ReducerOptions o;
        o.gradient_as_bucket_view = as_view;
        Reducer reducer(m.params(), group, o);
        const int64_t rows = 8 / size;
        Tensor loss = m.loss(batch().narrow(0, rank * rows, rows));
        reducer.prepare_for_backward({loss});
        loss.backward();
        for (const auto& p : m.params()) grads[rank].push_back(to_vector(p.grad()));
        if (as_view && rank == 0) {
          // .grad lies in the bucket: no copy back. (Not REQUIRE: Catch2
          // is not thread-safe; run_ranks rethrows on the test's thread.)
          EMBER_CHECK(m.w.grad().storage().data() == m.b.grad().storage().data(), Error,
                      "gradient_as_bucket_view: .grad does not share the bucket's storage");
        }
      });
      for (int r = 0; r < size; ++r) {
        require_values(values(grads[r][0], {3, 2}, DType::Float64), to_vector(single.w.grad()), 1e-12);
        require_values(values(grads[r][1], {2}, DType::Float64), to_vector(single.b.grad()), 1e-12);
      }
    }
  }
}

TEST_CASE("reducer: no_sync accumulation then one synced backward", "[reducer]") {
  // Two micro-batches per rank; the first without sync.
  Model single;
  single.loss(batch()).backward();
  std::vector<std::vector<double>> w_grads(2);
  run_ranks(2, [&](int rank, std::shared_ptr<ProcessGroup> group) {
    Model m;
    Reducer reducer(m.params(), group);
    Tensor mine = batch().narrow(0, rank * 4, 4);
    m.loss(mine.narrow(0, 0, 2)).backward();  // no prepare_for_backward: local only
    Tensor loss = m.loss(mine.narrow(0, 2, 2));
    reducer.prepare_for_backward({loss});
    loss.backward();
    w_grads[rank] = to_vector(m.w.grad());
  });
  // Sum of 2 micro-batch means per rank, averaged over ranks = 2 * full mean.
  const auto expected = to_vector(single.w.grad().mul(scalar_tensor(2.0)));
  for (int r = 0; r < 2; ++r) require_values(values(w_grads[r], {3, 2}, DType::Float64), expected, 1e-12);
}

TEST_CASE("reducer: unused parameters", "[reducer][errors]") {
  SECTION("without find_unused_parameters backward names them") {
    auto group = std::make_shared<RecordingGroup>(0, 1);
    Tensor used = param({1}, {1});
    Tensor unused = param({2, 3}, {2});
    Reducer reducer({used, unused}, group, {}, {"fc1.weight", "fc2.bias"});
    Tensor loss = used.mul(used).sum();
    reducer.prepare_for_backward({loss});
    require_throws<Error>([&] { loss.backward(); }, "fc2.bias (#1) received no gradient");
    require_throws<Error>([&] {
      Tensor l = used.sum();
      reducer.prepare_for_backward({l});
      l.backward();
    }, "find_unused_parameters=True");
  }
  SECTION("with find_unused_parameters they count as zero") {
    // Rank 0 uses c, rank 1 does not; nobody uses d.
    const bool as_view = GENERATE(false, true);
    INFO("gradient_as_bucket_view " << as_view);
    std::vector<std::vector<double>> c_grads(2);
    std::vector<bool> d_has_grad(2, true);
    std::vector<std::vector<size_t>> unused(2);
    run_ranks(2, [&](int rank, std::shared_ptr<ProcessGroup> group) {
      Tensor a = param({1, 2}, {2});
      Tensor c = param({3}, {1});
      Tensor d = param({4}, {1});
      ReducerOptions o;
      o.find_unused_parameters = true;
      o.gradient_as_bucket_view = as_view;
      Reducer reducer({a, c, d}, group, o);
      Tensor loss = a.sum();
      if (rank == 0) loss = loss.add(c.mul(scalar_tensor(2.0)).sum());
      reducer.prepare_for_backward({loss});
      unused[rank] = reducer.unused_parameters();
      loss.backward();
      c_grads[rank] = to_vector(c.grad());
      d_has_grad[rank] = d.grad().defined();
    });
    REQUIRE(unused[0] == std::vector<size_t>{2});
    REQUIRE(unused[1] == std::vector<size_t>{1, 2});
    REQUIRE(c_grads[0] == std::vector<double>{1});  // (2 + 0) / 2
    REQUIRE(c_grads[1] == std::vector<double>{1});
    REQUIRE_FALSE(d_has_grad[0]);  // unused everywhere: .grad stays None
    REQUIRE_FALSE(d_has_grad[1]);
  }
}

TEST_CASE("reducer rejects bad parameter lists", "[reducer][errors]") {
  auto group = std::make_shared<RecordingGroup>(0, 1);
  Tensor p = param({1}, {1});
  require_throws<ValueError>([&] { Reducer({p, p}, group); }, "appears twice");
  require_throws<ValueError>([&] { Reducer({zeros({1})}, group, {}, {"frozen"}); }, "frozen (#0) must be");
  require_throws<ValueError>([&] { Reducer({}, group); }, "no parameter that requires");
  require_throws<ValueError>([&] { Reducer({p}, nullptr); }, "process group is null");
}
