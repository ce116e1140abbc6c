// The gloo process group with N ranks as N threads of this process, meeting
// through an in-memory store: every collective's values for world sizes 2
// and 4, async Work, non-contiguous tensors, bad arguments, and a rank that
// never calls the collective (the others time out with a clear error).
#include <ember/distributed/process_group.h>

#include <exception>
#include <functional>
#include <thread>

#include "hash_store.h"
#include "util.h"

using namespace ember;
using namespace ember::distributed;
using Op = ember::distributed::ReduceOp;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

// Runs body(group) on `n` threads, one rank each, and returns what each rank
// returned (checked on the main thread: Catch2 assertions are not
// thread-safe). Rethrows the first rank's exception.
std::vector<std::vector<Tensor>> run_ranks(int n, const std::function<std::vector<Tensor>(ProcessGroup&)>& body,
                                           Milliseconds timeout = Milliseconds(10000)) {
  auto store = std::make_shared<test::HashStore>();
  store->set_timeout(timeout);
  std::vector<std::vector<Tensor>> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        ProcessGroupOptions options;
        options.timeout = timeout;
        options.master_addr = "127.0.0.1";
        auto group = make_process_group("gloo", store, r, n, options);
        results[r] = body(*group);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// Catch2's assertions must not run on the rank threads (its message streams
// are not thread-safe: they corrupted the heap now and then). Checks made on
// a rank throw instead, and run_ranks rethrows on the test's thread.
template <class E, class F>
void expect_throws(F&& fn, const std::string& text) {
  try {
    fn();
  } catch (const E& e) {
    EMBER_CHECK(std::string(e.what()).find(text) != std::string::npos, Error, "expected a message containing '",
                text, "', got: ", e.what());
    return;
  }
  throw Error(str("expected an exception containing '", text, "'"));
}

std::vector<double> iota(int64_t n, double start) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + i;
  return v;
}

}  // namespace

TEST_CASE("gloo all_reduce: every op, several dtypes, world sizes 2 and 4", "[distributed]") {
  if (!gloo_available()) return;
  for (int n : {2, 4}) {
    for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8, DType::Float16,
                     DType::BFloat16}) {
      auto res = run_ranks(n, [dt](ProcessGroup& g) {
        std::vector<Tensor> out;
        for (Op op : {Op::Sum, Op::Product, Op::Min, Op::Max}) {
          Tensor t = values({double(g.rank() + 1), 2.0 - g.rank() % 2}, {2}, dt);
          g.all_reduce(t, op)->wait();
          out.push_back(t);
        }
        if (is_floating(dt)) {
          Tensor t = values({double(g.rank()), 1}, {2}, dt);
          g.all_reduce(t, Op::Avg)->wait();
          out.push_back(t);
        }
        return out;
      });
      INFO("world size " << n << ", dtype " << dtype_name(dt));
      double sum = 0, prod = 1, sum2 = 0, prod2 = 1;
      for (int r = 0; r < n; ++r) {
        sum += r + 1;
        prod *= r + 1;
        sum2 += 2 - r % 2;
        prod2 *= 2 - r % 2;
      }
      for (int r = 0; r < n; ++r) {
        require_values(res[r][0], {sum, sum2});
        require_values(res[r][1], {prod, prod2});
        require_values(res[r][2], {1, 1});
        require_values(res[r][3], {double(n), 2});
        if (is_floating(dt)) require_values(res[r][4], {(n - 1) / 2.0, 1}, 1e-2);
      }
    }
  }
}

TEST_CASE("gloo broadcast, reduce and barrier", "[distributed]") {
  if (!gloo_available()) return;
  for (int n : {2, 4}) {
    auto res = run_ranks(n, [](ProcessGroup& g) {
      Tensor b = values({double(g.rank()), 10.0 + g.rank(), 7}, {3});
      g.broadcast(b, 1)->wait();
      Tensor r = values({double(g.rank()), 1}, {2}, DType::Float64);
      g.reduce(r, 0, Op::Sum)->wait();
      g.barrier()->wait();
      return std::vector<Tensor>{b, r};
    });
    for (int r = 0; r < n; ++r) {
      require_values(res[r][0], {1, 11, 7});
      // The root gets the sum; the others keep their input.
      if (r == 0)
        require_values(res[r][1], {n * (n - 1) / 2.0, double(n)});
      else
        require_values(res[r][1], {double(r), 1});
    }
  }
}

TEST_CASE("gloo all_gather, all_gather_into_tensor, reduce_scatter_tensor", "[distributed]") {
  if (!gloo_available()) return;
  for (int n : {2, 4}) {
    auto res = run_ranks(n, [n](ProcessGroup& g) {
      Tensor in = values({double(g.rank()), 100.0 + g.rank()}, {2}, DType::Int64);
      std::vector<Tensor> outs;
      for (int i = 0; i < n; ++i) outs.push_back(empty({2}, DType::Int64));
      g.all_gather(outs, in)->wait();
      Tensor flat = empty({n, 2}, DType::Int64);
      g.all_gather_into_tensor(flat, in)->wait();
      Tensor big = values(iota(2 * n, 10.0 * g.rank()), {2 * n});
      Tensor mine = empty({2});
      g.reduce_scatter_tensor(mine, big, Op::Sum)->wait();
      outs.push_back(flat);
      outs.push_back(mine);
      return outs;
    });
    std::vector<double> gathered;
    for (int i = 0; i < n; ++i) {
      gathered.push_back(i);
      gathered.push_back(100 + i);
    }
    double offset = 0;  // sum over ranks of 10 * rank
    for (int i = 0; i < n; ++i) offset += 10.0 * i;
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < n; ++i) require_values(res[r][i], {double(i), 100.0 + i});
      require_values(res[r][n], gathered);
      require_values(res[r][n + 1], {n * (2.0 * r) + offset, n * (2.0 * r + 1) + offset});
    }
  }
}

TEST_CASE("gloo gather and scatter", "[distributed]") {
  if (!gloo_available()) return;
  for (int n : {2, 4}) {
    const int root = n - 1;
    auto res = run_ranks(n, [n, root](ProcessGroup& g) {
      Tensor in = values({double(g.rank()), -1.0 * g.rank()}, {2});
      std::vector<Tensor> outs;
      if (g.rank() == root)
        for (int i = 0; i < n; ++i) outs.push_back(empty({2}));
      g.gather(outs, in, root)->wait();
      std::vector<Tensor> ins;
      if (g.rank() == root)
        for (int i = 0; i < n; ++i) ins.push_back(values({5.0 * i}, {1}));
      Tensor got = empty({1});
      g.scatter(got, ins, root)->wait();
      outs.push_back(got);
      return outs;
    });
    for (int r = 0; r < n; ++r) {
      if (r == root)
        for (int i = 0; i < n; ++i) require_values(res[r][i], {double(i), -1.0 * i});
      require_values(res[r].back(), {5.0 * r});
    }
  }
}

TEST_CASE("gloo send and recv in either order, with tags", "[distributed]") {
  if (!gloo_available()) return;
  auto res = run_ranks(2, [](ProcessGroup& g) {
    const int peer = 1 - g.rank();
    Tensor mine = values({double(g.rank()), 3}, {2});
    Tensor theirs = empty({2});
    Tensor tagged = empty({1});
    // Both ranks post their send first: must not deadlock.
    auto s = g.send(mine, peer, 0);
    auto r = g.recv(theirs, peer, 0);
    auto s2 = g.send(values({42.0 + g.rank()}, {1}), peer, 7);
    auto r2 = g.recv(tagged, peer, 7);
    s->wait();
    r->wait();
    s2->wait();
    r2->wait();
    return std::vector<Tensor>{theirs, tagged};
  });
  require_values(res[0][0], {1, 3});
  require_values(res[1][0], {0, 3});
  require_values(res[0][1], {43});
  require_values(res[1][1], {42});
}

TEST_CASE("gloo collectives are asynchronous and keep their order", "[distributed]") {
  if (!gloo_available()) return;
  auto res = run_ranks(2, [](ProcessGroup& g) {
    std::vector<Tensor> ts;
    std::vector<std::shared_ptr<Work>> works;
    for (int i = 0; i < 5; ++i) {
      ts.push_back(values({double(i + g.rank())}, {1}));
      works.push_back(g.all_reduce(ts.back(), Op::Sum));
    }
    for (auto& w : works) w->wait();
    for (auto& w : works) EMBER_CHECK(w->is_completed(), Error, "not completed after wait");
    return ts;
  });
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 5; ++i) require_values(res[r][i], {2.0 * i + 1});
}

TEST_CASE("gloo works on non-contiguous tensors through a copy", "[distributed]") {
  if (!gloo_available()) return;
  auto res = run_ranks(2, [](ProcessGroup& g) {
    Tensor base = values({1, 2, 3, 4, 5, 6}, {2, 3});
    Tensor t = base.transpose(0, 1);  // [3, 2], strided
    g.all_reduce(t, Op::Sum)->wait();
    Tensor col = zeros({3, 2}).select(1, 0);  // stride 2
    std::vector<Tensor> outs{col};
    Tensor in = values({double(g.rank()), 1, 2}, {3});
    if (g.rank() == 0) {
      std::vector<Tensor> two{zeros({3}), col};
      g.gather(two, in, 0)->wait();
    } else {
      std::vector<Tensor> none;
      g.gather(none, in, 0)->wait();
    }
    return std::vector<Tensor>{base, col};
  });
  for (int r = 0; r < 2; ++r) require_values(res[r][0], {2, 4, 6, 8, 10, 12});
  require_values(res[0][1], {1, 1, 2});
}

TEST_CASE("gloo rejects bad arguments with the collective's name", "[distributed]") {
  if (!gloo_available()) return;
  run_ranks(2, [](ProcessGroup& g) {
    Tensor t = values({1, 2}, {2});
    expect_throws<ValueError>([&] { g.broadcast(t, 2); }, "broadcast: root 2 is not a rank");
    std::vector<Tensor> one{empty({2})};
    expect_throws<ValueError>([&] { g.all_gather(one, t); }, "all_gather: expected 2 output tensors");
    std::vector<Tensor> wrong{empty({2}), empty({3})};
    expect_throws<ValueError>([&] { g.all_gather(wrong, t); }, "shape [3]");
    Tensor small = empty({3});
    expect_throws<ValueError>([&] { g.all_gather_into_tensor(small, t); }, "all_gather_into_tensor: output");
    Tensor i = values({1, 2}, {2}, DType::Int64);
    expect_throws<TypeError>([&] { g.all_reduce(i, Op::Avg); }, "all_reduce: ReduceOp.AVG");
    expect_throws<ValueError>([&] { g.send(t, g.rank(), 0); }, "send: destination rank");
    return std::vector<Tensor>{};
  });
}

TEST_CASE("gloo: a rank that skips a collective makes the others time out, naming it", "[distributed]") {
  if (!gloo_available()) return;
  auto res = run_ranks(
      2,
      [](ProcessGroup& g) {
        Tensor t = values({1}, {1});
        g.all_reduce(t, Op::Sum)->wait();  // #0 on both
        if (g.rank() == 1) {  // alive but not calling: rank 0 must time out
          std::this_thread::sleep_for(std::chrono::milliseconds(2000));
          return std::vector<Tensor>{};
        }
        std::string msg;
        try {
          g.all_reduce(t, Op::Sum)->wait();  // #1 on rank 0 only
        } catch (const Error& e) {
          msg = e.what();
        }
        EMBER_CHECK(msg.find("all_reduce #1 on rank 0 of 2") != std::string::npos, Error, "message: ", msg);
        EMBER_CHECK(msg.find("timed out after 1000 ms") != std::string::npos, Error, "message: ", msg);
        // The group is unusable afterwards, and says why.
        std::string again;
        try {
          g.barrier()->wait();
        } catch (const Error& e) {
          again = e.what();
        }
        EMBER_CHECK(again.find("unusable after an earlier failure") != std::string::npos, Error, "message: ", again);
        return std::vector<Tensor>{};
      },
      Milliseconds(1000));
}

TEST_CASE("gloo with EMBER_DISTRIBUTED_DEBUG=DETAIL reports mismatched collectives on every rank",
          "[distributed]") {
  if (!gloo_available()) return;
  setenv("EMBER_DISTRIBUTED_DEBUG", "DETAIL", 1);
  std::vector<std::string> messages(2);
  try {
    run_ranks(2, [&messages](ProcessGroup& g) {
      Tensor t = values({1, 2}, {2});
      g.all_reduce(t, Op::Sum)->wait();  // agreeing collectives pass the check
      try {
        if (g.rank() == 0)
          g.all_reduce(t, Op::Max)->wait();
        else
          g.broadcast(t, 0)->wait();
      } catch (const ValueError& e) {
        messages[g.rank()] = e.what();
      }
      return std::vector<Tensor>{t};
    });
  } catch (...) {
    unsetenv("EMBER_DISTRIBUTED_DEBUG");
    throw;
  }
  unsetenv("EMBER_DISTRIBUTED_DEBUG");
  for (const std::string& m : messages) {
    INFO(m);
    REQUIRE(m.find("#1 on rank") != std::string::npos);
    REQUIRE(m.find("mismatched collectives") != std::string::npos);
    REQUIRE(m.find("all_reduce(float32, numel=2, op=MAX)") != std::string::npos);
    REQUIRE(m.find("broadcast(float32, numel=2, root=0)") != std::string::npos);
  }
}

TEST_CASE("gloo: collectives that differ across ranks time out instead of exchanging data", "[distributed]") {
  if (!gloo_available()) return;
  std::vector<std::string> messages(2);
  auto res = run_ranks(
      2,
      [&messages](ProcessGroup& g) {
        // Same kind, different sizes: each collective's tag hashes its numel,
        // so neither rank reads the other's bytes.
        Tensor t = g.rank() == 0 ? values({1, 2}, {2}) : values({5, 6, 7}, {3});
        try {
          g.all_reduce(t, Op::Sum)->wait();
        } catch (const Error& e) {
          messages[g.rank()] = e.what();
        }
        return std::vector<Tensor>{t};
      },
      Milliseconds(1000));
  require_values(res[0][0], {1, 2});
  require_values(res[1][0], {5, 6, 7});
  // The first rank to time out closes its group; the other may then see its
  // peer leave before its own timeout fires (the order depends on the load).
  int timed_out = 0;
  for (const std::string& m : messages) {
    INFO(m);
    REQUIRE(m.find("all_reduce #0 on rank") != std::string::npos);
    const bool timeout = m.find("timed out after 1000 ms") != std::string::npos;
    REQUIRE((timeout || m.find("a peer closed its connection") != std::string::npos));
    timed_out += timeout;
  }
  REQUIRE(timed_out >= 1);
}

TEST_CASE("gloo: destroying a group with a stuck collective does not wait for the timeout", "[distributed]") {
  if (!gloo_available()) return;
  std::vector<double> seconds(2, 0);
  auto store = std::make_shared<test::HashStore>();
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<Work>> works(2);
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ProcessGroupOptions options;
      options.timeout = Milliseconds(3000);
      options.master_addr = "127.0.0.1";
      auto group = make_process_group("gloo", store, r, 2, options);
      Tensor t = values({1}, {1});
      if (r == 0) works[0] = group->all_reduce(t, Op::Sum);  // rank 1 never joins it
      const auto start = std::chrono::steady_clock::now();
      if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(500));  // alive, silent
      group.reset();
      seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(seconds[0] < 1.0);
  // The abandoned collective still ends, with an error, instead of hanging.
  bool raised = false;
  try {
    works[0]->wait();
  } catch (const Error&) {
    raised = true;
  }
  REQUIRE(raised);
}
