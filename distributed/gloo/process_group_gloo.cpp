#include "process_group_gloo.h"

#include <netdb.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>

#include "gloo_reduce.h"
#include "gloo_store.h"
#include "loop_thread.h"

namespace ember::distributed {

namespace {

enum Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kAllGatherInto, kReduceScatter, kGather, kScatter,
            kBarrier, kAllToAll, kNumKinds };
const char* const kKindNames[kNumKinds] = {"all_reduce", "broadcast", "reduce", "all_gather",
                                           "all_gather_into_tensor", "reduce_scatter_tensor", "gather",
                                           "scatter", "barrier", "all_to_all"};
// gloo slot prefix of send/recv (gloo's own collectives use 0x01..0x08).
constexpr uint8_t kSendRecvSlotPrefix = 0x20;
// Number of int64 fields in a fingerprint.
constexpr size_t kFingerprintFields = 6;

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return false;
  freeaddrinfo(res);
  return true;
}

// The interface gloo listens on: EMBER_GLOO_IFNAME (or PyTorch's
// GLOO_SOCKET_IFNAME) when set; loopback when the master is local; else this
// host's name when it resolves (as PyTorch does), loopback otherwise.
gloo::transport::tcp::attr device_attr(const std::string& master_addr) {
  gloo::transport::tcp::attr attr;
  for (const char* var : {"EMBER_GLOO_IFNAME", "GLOO_SOCKET_IFNAME"}) {
    const char* ifname = std::getenv(var);
    if (ifname && *ifname) {
      attr.iface = ifname;
      return attr;
    }
  }
  attr.hostname = "127.0.0.1";
  if (!master_addr.empty() && !is_loopback(master_addr)) {
    char name[256] = {0};
    if (gethostname(name, sizeof(name) - 1) == 0 && resolves(name)) attr.hostname = name;
  }
  return attr;
}

// The TCP device, its event-loop thread under SCHED_BATCH (loop_thread.h).
std::shared_ptr<gloo::transport::Device> make_device(const std::string& master_addr) {
  const std::set<long> before = thread_ids();
  auto device = gloo::transport::tcp::CreateDevice(device_attr(master_addr));
  batch_schedule_new_threads(before);
  return device;
}

bool debug_detail() {
  const char* v = std::getenv("EMBER_DISTRIBUTED_DEBUG");
  return v && std::string(v) == "DETAIL";
}

void check_cpu(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(t.device().is_cpu(), ValueError, op,
              ": gloo works on CPU tensors; use the nccl backend for cuda tensors");
}

void check_root(int root, int size, const char* op) {
  EMBER_CHECK(root >= 0 && root < size, ValueError, op, ": root ", root, " is not a rank of this group of size ",
              size);
}

void check_like(const Tensor& t, const Tensor& like, const char* op, const char* what) {
  check_cpu(t, op);
  EMBER_CHECK(t.dtype() == like.dtype(), TypeError, op, ": ", what, " has dtype ", dtype_name(t.dtype()),
              " but the input is ", dtype_name(like.dtype()));
  EMBER_CHECK(t.numel() == like.numel(), ValueError, op, ": ", what, " has shape ", t.shape_str(),
              " but the input has shape ", like.shape_str());
}

void check_list(const std::vector<Tensor>& ts, const Tensor& like, int size, const char* op, const char* what) {
  EMBER_CHECK(static_cast<int>(ts.size()) == size, ValueError, op, ": expected ", size, " ", what,
              " (one per rank), got ", ts.size());
  for (const Tensor& t : ts) check_like(t, like, op, what);
}

// t itself when it is contiguous, else a contiguous copy (written back later).
Tensor staged(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  return t.is_contiguous() ? t.detach() : t.detach().contiguous();
}

// Makes `dst` hold `src` (a staged buffer of the same numel).
void write_back(const Tensor& dst, const Tensor& src) {
  if (dst.is_contiguous() && dst.data_ptr() == src.data_ptr()) {
    dst.bump_version();
    return;
  }
  autograd::NoGradGuard no_grad;
  dst.detach().copy_(src.view(dst.shape()));
}

// The i-th of n equal chunks of a contiguous buffer, shaped like `like`.
Tensor chunk(const Tensor& flat, int i, const Tensor& like) {
  const int64_t n = like.numel();
  return flat.reshape({flat.numel()}).narrow(0, i * n, n).view(like.shape());
}

uint8_t* bytes(const Tensor& t) { return static_cast<uint8_t*>(t.data_ptr()); }
size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

void check_reducible(DType t, ReduceOp op, const char* name) {
  EMBER_CHECK(!(op == ReduceOp::Avg && !is_floating(t)), TypeError, name,
              ": ReduceOp.AVG needs a floating-point tensor, got ", dtype_name(t));
}

}  // namespace

const char* CollectiveInfo::name() const { return kind >= 0 && kind < kNumKinds ? kKindNames[kind] : "?"; }

std::string CollectiveInfo::describe() const {
  std::string s = str(name(), "(");
  if (dtype >= 0) s += dtype_name(static_cast<DType>(dtype));
  if (dtype >= 0 && numel >= 0) s += str(", numel=", numel);
  if (root >= 0) s += str(", root=", root);
  if (reduce >= 0) s += str(", op=", to_string(static_cast<ReduceOp>(reduce)));
  return s + ")";
}

uint32_t CollectiveInfo::tag() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (int64_t v : {int64_t(kind), seq, int64_t(dtype), numel, int64_t(root), int64_t(reduce)}) {
    for (int b = 0; b < 8; ++b) {
      h ^= (static_cast<uint64_t>(v) >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

struct ProcessGroupGloo::PendingP2P {
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  bool is_send = false;
  std::atomic<bool> done{false};
  std::thread waiter;
};

struct ProcessGroupGloo::Comm {
  std::shared_ptr<gloo::Context> context;
  Milliseconds timeout{};
  int rank = 0;
  int size = 0;
  bool debug_detail = false;
  std::mutex mu;                  // guards broken and graveyard
  std::string broken;             // the first failure's message
  std::vector<Tensor> graveyard;  // buffers of failed collectives: gloo may still write into them

  std::string where(const CollectiveInfo& info) const {
    return str(info.name(), " #", info.seq, " on rank ", rank, " of ", size);
  }
  void mark_broken(const std::string& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (broken.empty()) broken = msg;
  }
  [[noreturn]] void fail(const CollectiveInfo& info, const std::string& what);
  void check_fingerprints(const CollectiveInfo& info);
  // Reduces the contiguous `buf` across the group in place (AVG: SUM, then
  // divided by the group size), as collective `info` (`name` in errors).
  void all_reduce_in_place(const Tensor& buf, ReduceOp op, const CollectiveInfo& info, const char* name);
};

void ProcessGroupGloo::Comm::all_reduce_in_place(const Tensor& buf, ReduceOp op, const CollectiveInfo& info,
                                                 const char* name) {
  if (buf.numel() == 0) return;
  dispatch(buf.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gloo::AllreduceOptions o(context);
    o.setOutput<T>(buf.data<T>(), buf.numel());
    o.setReduceFunction(gloo_detail::reduce_fn<T>(op));
    o.setTag(info.tag());
    o.setTimeout(timeout);
    gloo::allreduce(o);
    if constexpr (!std::is_integral_v<T>) {
      if (op == ReduceOp::Avg) gloo_detail::divide<T>(buf.data_ptr(), buf.numel(), size);
    }
  });
}

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options)
    : ProcessGroup(rank, size), comm_(std::make_shared<Comm>()) {
  comm_->timeout = options.timeout;
  comm_->rank = rank;
  comm_->size = size;
  comm_->debug_detail = debug_detail();
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(options.timeout);
  try {
    auto device = make_device(options.master_addr);
    GlooStore gloo_store(store);
    context->connectFullMesh(gloo_store, device);
    // Nobody leaves before everyone is connected: a rank that finished its
    // side first and destroyed the group at once would close sockets a slower
    // peer is still handshaking on (PyTorch ends its group setup with a
    // store barrier for the same reason).
    store->set(str("connected/", rank), Bytes{1});
    std::vector<std::string> keys;
    for (int r = 0; r < size; ++r) keys.push_back(str("connected/", r));
    store->wait(keys, options.timeout);
  } catch (const std::exception& e) {
    throw Error(str("init_process_group: rank ", rank, " of ", size, " could not connect to its peers within ",
                    options.timeout.count(), " ms (a rank may not have started, or the address is unreachable): ",
                    e.what()));
  }
  comm_->context = context;
}

ProcessGroupGloo::~ProcessGroupGloo() {
  std::vector<std::unique_ptr<PendingP2P>> pending;
  {
    std::lock_guard<std::mutex> lock(p2p_mu_);
    pending.swap(p2p_);
  }
  for (auto& p : pending) {
    if (!p->done && p->buffer) {
      if (p->is_send)
        p->buffer->abortWaitSend();
      else
        p->buffer->abortWaitRecv();
    }
    p->waiter.join();
  }
}

CollectiveInfo ProcessGroupGloo::info_for(int kind, const Tensor* t) {
  CollectiveInfo info;
  info.kind = kind;
  if (t) {
    info.dtype = static_cast<int>(t->dtype());
    info.numel = t->numel();
  }
  return info;  // enqueue() numbers it
}

void ProcessGroupGloo::Comm::fail(const CollectiveInfo& info, const std::string& what) {
  std::string msg;
  if (what.find("Timed out") != std::string::npos || what.find("timed out") != std::string::npos) {
    msg = str(where(info), " timed out after ", timeout.count(),
              " ms: a peer may have exited or not called the same collective; "
              "set EMBER_DISTRIBUTED_DEBUG=DETAIL to check that every rank calls the same collectives (gloo: ",
              what, ")");
  } else {
    msg = str(where(info), " failed (timeout ", timeout.count(),
              " ms): a peer closed its connection; it may have exited or crashed (gloo: ", what, ")");
  }
  mark_broken(msg);
  throw Error(msg);
}

std::shared_ptr<Work> ProcessGroupGloo::enqueue(CollectiveInfo info, std::vector<Tensor> keep,
                                                std::function<void(const CollectiveInfo&, Comm&)> body) {
  // Numbering and queueing under one lock: collectives issued concurrently
  // from several threads still run in the order of their numbers.
  std::lock_guard<std::mutex> issue(issue_mu_);
  info.seq = seq_++;
  return queue_.push([comm = comm_, info, keep = std::move(keep), body = std::move(body)] {
    Comm& c = *comm;
    {
      std::lock_guard<std::mutex> lock(c.mu);
      if (!c.broken.empty())
        throw Error(str(c.where(info), ": the process group is unusable after an earlier failure: ", c.broken));
    }
    try {
      if (c.debug_detail) c.check_fingerprints(info);
      body(info, c);
    } catch (const gloo::Exception& e) {
      {
        std::lock_guard<std::mutex> lock(c.mu);
        c.graveyard.insert(c.graveyard.end(), keep.begin(), keep.end());
      }
      c.fail(info, e.what());
    }
  });
}

void ProcessGroupGloo::Comm::check_fingerprints(const CollectiveInfo& info) {
  const int64_t mine[kFingerprintFields] = {info.kind, info.seq, info.dtype, info.numel, info.root, info.reduce};
  std::vector<int64_t> all(kFingerprintFields * size);
  gloo::AllgatherOptions o(context);
  o.setInput<int64_t>(const_cast<int64_t*>(mine), kFingerprintFields);
  o.setOutput<int64_t>(all.data(), all.size());
  o.setTag(static_cast<uint32_t>(0x80000000u ^ static_cast<uint32_t>(info.seq)));
  o.setTimeout(timeout);
  gloo::allgather(o);
  for (int r = 0; r < size; ++r) {
    const int64_t* f = &all[kFingerprintFields * r];
    if (std::equal(f, f + kFingerprintFields, mine)) continue;
    CollectiveInfo theirs;
    theirs.kind = static_cast<int>(f[0]);
    theirs.seq = f[1];
    theirs.dtype = static_cast<int>(f[2]);
    theirs.numel = f[3];
    theirs.root = static_cast<int>(f[4]);
    theirs.reduce = static_cast<int>(f[5]);
    const std::string msg = str(where(info), ": mismatched collectives: rank ", rank, " called ", info.describe(),
                                " but rank ", r, " called ", theirs.describe(), " (EMBER_DISTRIBUTED_DEBUG=DETAIL)");
    mark_broken(msg);
    throw ValueError(msg);
  }
}

std::shared_ptr<Work> ProcessGroupGloo::all_reduce(Tensor& tensor, ReduceOp op) {
  check_cpu(tensor, "all_reduce");
  if (is_complex(tensor.dtype())) {
    check_complex_reduce(op, "all_reduce");
    Tensor reals = as_reals(tensor);
    return all_reduce(reals, op);
  }
  check_reducible(tensor.dtype(), op, "all_reduce");
  CollectiveInfo info = info_for(kAllReduce, &tensor);
  info.reduce = static_cast<int>(op);
  Tensor buf = staged(tensor);
  return enqueue(info, {tensor, buf}, [tensor, buf, op](const CollectiveInfo& info, Comm& c) {
    c.all_reduce_in_place(buf, op, info, "all_reduce");
    write_back(tensor, buf);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::broadcast(Tensor& tensor, int root) {
  check_cpu(tensor, "broadcast");
  check_root(root, size_, "broadcast");
  CollectiveInfo info = info_for(kBroadcast, &tensor);
  info.root = root;
  Tensor buf = staged(tensor);
  return enqueue(info, {tensor, buf}, [tensor, buf, root](const CollectiveInfo& info, Comm& c) {
    if (buf.numel() > 0) {
      gloo::BroadcastOptions o(c.context);
      o.setOutput<uint8_t>(bytes(buf), nbytes(buf));
      o.setRoot(root);
      o.setTag(info.tag());
      o.setTimeout(c.timeout);
      gloo::broadcast(o);
    }
    if (c.rank != root) write_back(tensor, buf);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce(Tensor& tensor, int root, ReduceOp op) {
  if (is_complex(tensor.dtype())) {
    check_complex_reduce(op, "reduce");
    Tensor reals = as_reals(tensor);
    return reduce(reals, root, op);
  }
  check_cpu(tensor, "reduce");
  check_root(root, size_, "reduce");
  check_reducible(tensor.dtype(), op, "reduce");
  CollectiveInfo info = info_for(kReduce, &tensor);
  info.root = root;
  info.reduce = static_cast<int>(op);
  Tensor in = staged(tensor);
  // The root reduces into its own tensor; the others into scratch, so their
  // input stays as it was.
  Tensor out = rank_ == root ? in : empty_like(in);
  return enqueue(info, {tensor, in, out}, [tensor, in, out, root, op](const CollectiveInfo& info, Comm& c) {
    if (in.numel() > 0) {
      dispatch(in.dtype(), "reduce", [&](auto tag) {
        using T = typename decltype(tag)::type;
        gloo::ReduceOptions o(c.context);
        if (c.rank != root) o.setInput<T>(in.data<T>(), in.numel());
        o.setOutput<T>(out.data<T>(), out.numel());
        o.setRoot(root);
        o.setReduceFunction(gloo_detail::reduce_fn<T>(op));
        o.setTag(info.tag());
        o.setTimeout(c.timeout);
        gloo::reduce(o);
        if constexpr (!std::is_integral_v<T>) {
          if (op == ReduceOp::Avg && c.rank == root) gloo_detail::divide<T>(out.data_ptr(), out.numel(), c.size);
        }
      });
    }
    if (c.rank == root) write_back(tensor, out);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  check_cpu(input, "all_gather");
  check_list(outputs, input, size_, "all_gather", "output tensors");
  CollectiveInfo info = info_for(kAllGather, &input);
  Tensor in = staged(input);
  Tensor gathered = empty({size_ * input.numel()}, input.dtype());
  std::vector<Tensor> keep = outputs;
  keep.insert(keep.end(), {in, gathered});
  return enqueue(info, keep, [outputs, in, gathered](const CollectiveInfo& info, Comm& c) {
    if (in.numel() > 0) {
      gloo::AllgatherOptions o(c.context);
      o.setInput<uint8_t>(bytes(in), nbytes(in));
      o.setOutput<uint8_t>(bytes(gathered), nbytes(gathered));
      o.setTag(info.tag());
      o.setTimeout(c.timeout);
      gloo::allgather(o);
    }
    for (int r = 0; r < c.size; ++r) write_back(outputs[r], chunk(gathered, r, outputs[r]));
  });
}

std::shared_ptr<Work> ProcessGroupGloo::all_gather_into_tensor(Tensor& output, const Tensor& input) {
  const char* op = "all_gather_into_tensor";
  check_cpu(input, op);
  check_cpu(output, op);
  EMBER_CHECK(output.dtype() == input.dtype(), TypeError, op, ": output has dtype ", dtype_name(output.dtype()),
              " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK(output.numel() == size_ * input.numel(), ValueError, op, ": output of shape ", output.shape_str(),
              " should hold world_size (", size_, ") times the input of shape ", input.shape_str());
  CollectiveInfo info = info_for(kAllGatherInto, &input);
  Tensor in = staged(input);
  Tensor out = staged(output);
  return enqueue(info, {output, in, out}, [output, in, out](const CollectiveInfo& info, Comm& c) {
    if (in.numel() > 0) {
      gloo::AllgatherOptions o(c.context);
      o.setInput<uint8_t>(bytes(in), nbytes(in));
      o.setOutput<uint8_t>(bytes(out), nbytes(out));
      o.setTag(info.tag());
      o.setTimeout(c.timeout);
      gloo::allgather(o);
    }
    write_back(output, out);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) {
  const char* name = "reduce_scatter_tensor";
  if (is_complex(output.dtype()) && output.dtype() == input.dtype()) {
    check_complex_reduce(op, name);
    Tensor out_reals = as_reals(output);
    return reduce_scatter_tensor(out_reals, as_reals(input), op);
  }
  check_cpu(input, name);
  check_cpu(output, name);
  check_reducible(input.dtype(), op, name);
  EMBER_CHECK(output.dtype() == input.dtype(), TypeError, name, ": output has dtype ", dtype_name(output.dtype()),
              " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK(input.numel() == size_ * output.numel(), ValueError, name, ": input of shape ", input.shape_str(),
              " should hold world_size (", size_, ") times the output of shape ", output.shape_str());
  CollectiveInfo info = info_for(kReduceScatter, &input);
  info.reduce = static_cast<int>(op);
  Tensor buf;
  {
    autograd::NoGradGuard no_grad;
    buf = input.detach().contiguous().clone();  // all-reduced in full, then our chunk kept
  }
  return enqueue(info, {output, buf}, [output, buf, op](const CollectiveInfo& info, Comm& c) {
    c.all_reduce_in_place(buf, op, info, "reduce_scatter_tensor");
    write_back(output, chunk(buf, c.rank, output));
  });
}

std::shared_ptr<Work> ProcessGroupGloo::gather(std::vector<Tensor>& outputs, const Tensor& input, int root) {
  check_cpu(input, "gather");
  check_root(root, size_, "gather");
  if (rank_ == root) check_list(outputs, input, size_, "gather", "output tensors");
  CollectiveInfo info = info_for(kGather, &input);
  info.root = root;
  Tensor in = staged(input);
  Tensor gathered = rank_ == root ? empty({size_ * input.numel()}, input.dtype()) : Tensor();
  std::vector<Tensor> keep = outputs;
  keep.insert(keep.end(), {in});
  if (gathered.defined()) keep.push_back(gathered);
  return enqueue(info, keep, [outputs, in, gathered, root](const CollectiveInfo& info, Comm& c) {
    if (in.numel() > 0) {
      gloo::GatherOptions o(c.context);
      o.setInput<uint8_t>(bytes(in), nbytes(in));
      if (c.rank == root) o.setOutput<uint8_t>(bytes(gathered), nbytes(gathered));
      o.setRoot(root);
      o.setTag(info.tag());
      o.setTimeout(c.timeout);
      gloo::gather(o);
    }
    if (c.rank == root)
      for (int r = 0; r < c.size; ++r) write_back(outputs[r], chunk(gathered, r, outputs[r]));
  });
}

std::shared_ptr<Work> ProcessGroupGloo::scatter(Tensor& output, const std::vector<Tensor>& inputs, int root) {
  check_cpu(output, "scatter");
  check_root(root, size_, "scatter");
  if (rank_ == root) check_list(inputs, output, size_, "scatter", "input tensors");
  CollectiveInfo info = info_for(kScatter, &output);
  info.root = root;
  Tensor out = staged(output);
  std::vector<Tensor> ins;
  if (rank_ == root)
    for (const Tensor& t : inputs) ins.push_back(staged(t));
  std::vector<Tensor> keep = ins;
  keep.insert(keep.end(), {output, out});
  return enqueue(info, keep, [output, out, ins, root](const CollectiveInfo& info, Comm& c) {
    if (out.numel() > 0) {
      gloo::ScatterOptions o(c.context);
      if (c.rank == root) {
        std::vector<uint8_t*> ptrs;
        for (const Tensor& t : ins) ptrs.push_back(bytes(t));
        o.setInputs<uint8_t>(ptrs, nbytes(out));
      }
      o.setOutput<uint8_t>(bytes(out), nbytes(out));
      o.setRoot(root);
      o.setTag(info.tag());
      o.setTimeout(c.timeout);
      gloo::scatter(o);
    }
    write_back(output, out);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::barrier() {
  CollectiveInfo info = info_for(kBarrier);
  return enqueue(info, {}, [](const CollectiveInfo& info, Comm& c) {
    gloo::BarrierOptions o(c.context);
    o.setTag(info.tag());
    o.setTimeout(c.timeout);
    gloo::barrier(o);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::all_to_all(Tensor& output, const Tensor& input,
                                                  const std::vector<int64_t>& output_splits,
                                                  const std::vector<int64_t>& input_splits) {
  const char* name = "all_to_all";
  check_cpu(input, name);
  check_cpu(output, name);
  EMBER_CHECK(output.dtype() == input.dtype(), TypeError, name, ": output has dtype ", dtype_name(output.dtype()),
              " but the input is ", dtype_name(input.dtype()));
  const std::vector<int64_t> in_counts = all_to_all_counts(input, input_splits, size_, "input");
  const std::vector<int64_t> out_counts = all_to_all_counts(output, output_splits, size_, "output");
  EMBER_CHECK(in_counts[rank_] == out_counts[rank_], ValueError, name, ": rank ", rank_, " sends itself ",
              in_counts[rank_], " elements but its output split expects ", out_counts[rank_]);
  CollectiveInfo info = info_for(kAllToAll, &input);
  info.numel = -1;  // uneven splits make it differ between ranks
  Tensor in = staged(input);
  Tensor out = staged(output);
  return enqueue(info, {output, in, out}, [output, in, out, in_counts, out_counts](const CollectiveInfo& info,
                                                                                  Comm& c) {
    // gloo counts in elements of the type it is given: bytes here.
    const int64_t esize = in.element_size();
    std::vector<int64_t> in_bytes, out_bytes;
    for (int64_t n : in_counts) in_bytes.push_back(n * esize);
    for (int64_t n : out_counts) out_bytes.push_back(n * esize);
    // Every pair still exchanges a (maybe empty) message: an empty tensor
    // gets a byte of scratch so gloo never sees a null buffer.
    uint8_t scratch_in = 0, scratch_out = 0;
    gloo::AlltoallvOptions o(c.context);
    o.setInput<uint8_t>(in.numel() > 0 ? bytes(in) : &scratch_in, in_bytes);
    o.setOutput<uint8_t>(out.numel() > 0 ? bytes(out) : &scratch_out, out_bytes);
    o.setTag(info.tag());
    o.setTimeout(c.timeout);
    gloo::alltoallv(o);
    write_back(output, out);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::send(const Tensor& tensor, int dst, int tag) {
  check_cpu(tensor, "send");
  EMBER_CHECK(dst >= 0 && dst < size_ && dst != rank_, ValueError, "send: destination rank ", dst,
              " must be another rank of this group of size ", size_, " (this is rank ", rank_, ")");
  return point_to_point(true, tensor, staged(tensor), dst, tag);
}

std::shared_ptr<Work> ProcessGroupGloo::recv(Tensor& tensor, int src, int tag) {
  check_cpu(tensor, "recv");
  EMBER_CHECK(src >= 0 && src < size_ && src != rank_, ValueError, "recv: source rank ", src,
              " must be another rank of this group of size ", size_, " (this is rank ", rank_, ")");
  return point_to_point(false, tensor, staged(tensor), src, tag);
}

// Posts the send/recv now and waits for it on a thread of its own, so that
// isend and irecv in either order on two ranks cannot deadlock.
std::shared_ptr<Work> ProcessGroupGloo::point_to_point(bool is_send, Tensor tensor, Tensor buf, int peer, int tag) {
  const char* name = is_send ? "send" : "recv";
  auto work = std::make_shared<FutureWork>();
  auto p = std::make_unique<PendingP2P>();
  p->is_send = is_send;
  PendingP2P* pending = p.get();
  {
    std::lock_guard<std::mutex> lock(comm_->mu);
    EMBER_CHECK(comm_->broken.empty(), Error, name, " on rank ", rank_, " of ", size_,
                ": the process group is unusable after an earlier failure: ", comm_->broken);
  }
  {
    std::lock_guard<std::mutex> lock(p2p_mu_);
    // Join the waiters that are done before adding one.
    for (auto it = p2p_.begin(); it != p2p_.end();) {
      if ((*it)->done) {
        (*it)->waiter.join();
        it = p2p_.erase(it);
      } else {
        ++it;
      }
    }
    const uint64_t slot = gloo::Slot::build(kSendRecvSlotPrefix, static_cast<uint32_t>(tag));
    if (buf.numel() > 0) {
      p->buffer = comm_->context->createUnboundBuffer(buf.data_ptr(), nbytes(buf));
      if (is_send)
        p->buffer->send(peer, slot);
      else
        p->buffer->recv(peer, slot);
    }
    p->waiter = std::thread([this, work, pending, tensor, buf, peer, tag, is_send, name] {
      std::exception_ptr error;
      try {
        bool ok = true;
        if (buf.numel() > 0) ok = is_send ? pending->buffer->waitSend(comm_->timeout)
                                          : pending->buffer->waitRecv(comm_->timeout);
        EMBER_CHECK(ok, Error, name, " on rank ", rank_, " of ", size_, " was aborted (the group was destroyed)");
        if (!is_send) write_back(tensor, buf);
      } catch (const gloo::Exception& e) {
        const std::string what = e.what();
        const bool timed_out = what.find("imed out") != std::string::npos;
        error = std::make_exception_ptr(Error(str(
            name, " (tag ", tag, ", ", is_send ? "to" : "from", " rank ", peer, ") on rank ", rank_, " of ", size_,
            timed_out ? str(" timed out after ", comm_->timeout.count(), " ms: the peer may have exited or not "
                            "called the matching ", is_send ? "recv" : "send")
                      : std::string(" failed: the peer may have exited"),
            " (gloo: ", what, ")")));
      } catch (...) {
        error = std::current_exception();
      }
      if (error) {  // gloo may still write into the buffer: keep it
        std::lock_guard<std::mutex> lock(comm_->mu);
        comm_->graveyard.push_back(buf);
      }
      pending->done = true;
      work->finish(error);
    });
    p2p_.push_back(std::move(p));
  }
  return work;
}

std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                      ProcessGroupOptions options) {
  return std::make_shared<ProcessGroupGloo>(std::move(store), rank, size, std::move(options));
}

}  // namespace ember::distributed
