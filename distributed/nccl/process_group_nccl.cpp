#include "process_group_nccl.h"
#include "nccl_api.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>

#include "nccl_util.h"

namespace ember::distributed {
namespace nccl {

namespace {

bool env_is_one(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }
char* bytes(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

void check_reducible(DType t, ReduceOp op, const char* name) {
  EMBER_CHECK(!(op == ReduceOp::Avg && !is_floating(t)), TypeError, name,
              ": ReduceOp.AVG needs a floating-point tensor, got ", dtype_name(t));
}

void copy_on(cudaStream_t s, const Tensor& dst, const void* src) {
  if (nbytes(dst) == 0) return;
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src, nbytes(dst), cudaMemcpyDeviceToDevice, s));
}

}  // namespace

ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options)
    : ProcessGroup(rank, size),
      store_(std::move(store)),
      timeout_(options.timeout),
      blocking_wait_(env_is_one("EMBER_NCCL_BLOCKING_WAIT") || env_is_one("TORCH_NCCL_BLOCKING_WAIT")) {
  EMBER_CHECK(cuda::device_count() > 0, Error,
              "init_process_group: the nccl backend needs a CUDA GPU, but none is usable here (",
              cuda::unavailable_reason(), "); use backend='gloo' for CPU tensors");
}

ProcessGroupNCCL::~ProcessGroupNCCL() {
  // Let queued collectives finish (the host never waited for them): the
  // watchdog ends one that cannot within the timeout. Then the communicator
  // is destroyed with the last reference to it.
  while (watchdog_.has_unfinished()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int ProcessGroupNCCL::device_for(const Tensor& t, const char* op) {
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    if (comm_) return comm_->device;
  }
  EMBER_CHECK(t.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(t.device().is_cuda(), ValueError, op,
              ": nccl works on CUDA tensors; use the gloo backend for CPU tensors");
  return t.device().index;
}

void ProcessGroupNCCL::check_tensor(const Tensor& t, int device, const char* op, const char* what) {
  EMBER_CHECK(t.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(t.device().is_cuda(), ValueError, op,
              ": nccl works on CUDA tensors; use the gloo backend for CPU tensors");
  EMBER_CHECK(t.device().index == device, ValueError, op, ": ", what, " is on ", t.device().str(),
              " but this process group uses cuda:", device, " (one GPU per process)");
  EMBER_CHECK(t.is_contiguous(), ValueError, op, ": ", what, " must be contiguous (call .contiguous() first)");
  to_nccl(t.dtype(), op);
}

void ProcessGroupNCCL::check_root(int root, const char* op) const {
  EMBER_CHECK(root >= 0 && root < size_, ValueError, op, ": root ", root, " is not a rank of this group of size ",
              size_);
}

std::shared_ptr<Comm> ProcessGroupNCCL::comm_for(int device, const std::string& where) {
  if (comm_) {
    EMBER_CHECK(comm_->device == device, ValueError, where, ": the tensors are on cuda:", device,
                " but this process group uses cuda:", comm_->device);
    return comm_;
  }
  EMBER_CHECK(init_error_.empty(), Error, where, ": the process group is unusable: ", init_error_);
  try {
    comm_ = create_comm(device, where);
  } catch (const std::exception& e) {
    init_error_ = e.what();
    throw;
  }
  return comm_;
}

std::shared_ptr<Comm> ProcessGroupNCCL::create_comm(int device, const std::string& where) {
  auto c = std::make_shared<Comm>();
  c->device = device;
  c->rank = rank_;
  c->size = size_;
  c->timeout = timeout_;
  // Rank 0 makes the id; every rank checks in before ncclCommInitRank, which
  // has no timeout of its own.
  const std::string key = "nccl/comm0/";
  ncclUniqueId id;
  if (rank_ == 0) {
    EMBER_NCCL_CHECK(nccl::api().GetUniqueId(&id), nullptr, where);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&id);
    store_->set(key + "uid", Bytes(p, p + sizeof(id)));
  }
  try {
    if (store_->add(key + "joined", 1) == size_) store_->set(key + "all_joined", Bytes{1});
    store_->wait({key + "all_joined"}, timeout_);
    if (rank_ != 0) {
      const Bytes b = store_->get(key + "uid");
      EMBER_CHECK(b.size() == sizeof(id), Error, "the store holds ", b.size(), " bytes for the NCCL id, expected ",
                  sizeof(id));
      std::memcpy(&id, b.data(), sizeof(id));
    }
  } catch (const std::exception& e) {
    throw Error(str(where, ": could not create the NCCL communicator: not every rank reached its first collective "
                    "on this group within ", timeout_.count(), " ms (a rank may have exited or be running a "
                    "different collective) (", e.what(), ")"));
  }
  cuda::DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&c->ready, cudaEventDisableTiming));
  EMBER_NCCL_CHECK(nccl::api().CommInitRank(&c->comm, size_, id, rank_), nullptr, where + " (creating the communicator)");
  return c;
}

std::shared_ptr<Work> ProcessGroupNCCL::run(const char* name, int device, std::vector<Tensor> keep, Body body,
                                            bool blocking) {
  // Numbering and issuing under one lock: collectives issued from several
  // threads reach the NCCL stream in the order of their numbers.
  std::lock_guard<std::mutex> issue(issue_mu_);
  const int64_t seq = seq_++;
  const std::string where = str(name, " #", seq, " on rank ", rank_, " of ", size_);
  std::shared_ptr<Comm> c = comm_for(device, where);
  std::lock_guard<std::mutex> calls(c->issue_mu);
  {
    const std::string b = c->broken();
    EMBER_CHECK(b.empty(), Error, where, ": the process group is unusable after an earlier failure: ", b);
  }
  cuda::DeviceGuard guard(device);
  // The NCCL stream starts after what is queued on the compute stream (the
  // kernels that produced the inputs).
  EMBER_CUDA_CHECK(cudaEventRecord(c->ready, cuda::current_cuda_stream(device)));
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(c->stream, c->ready, 0));
  auto work = std::make_shared<NCCLWork>(c, where, std::move(keep), blocking || blocking_wait_);
  watchdog_.add(work);  // timed from here, so a host call that hangs is caught too
  try {
    c->issuing_since_ms = now_ms();
    body(c->comm, c->stream, where);
    c->issuing_since_ms = 0;
    cudaEvent_t end = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&end, cudaEventDisableTiming));
    const cudaError_t recorded = cudaEventRecord(end, c->stream);
    if (recorded != cudaSuccess) cudaEventDestroy(end);
    EMBER_CUDA_CHECK(recorded);
    // Handed over only once recorded: an unrecorded event reads as complete.
    work->set_end_event(end);
  } catch (const std::exception& e) {
    c->issuing_since_ms = 0;
    // The watchdog's timeout message when it aborted a hung call; else this error.
    const std::string b = c->broken();
    const std::string msg = b.empty() ? std::string(e.what()) : b;
    c->mark_broken(msg);
    work->poll();  // fails it (broken), keeping its tensors
    throw Error(msg);
  }
  return work;
}

std::shared_ptr<Work> ProcessGroupNCCL::all_reduce(Tensor& tensor, ReduceOp op) {
  if (is_complex(tensor.dtype())) {
    check_complex_reduce(op, "all_reduce");
    Tensor reals = as_reals(tensor);
    return all_reduce(reals, op);
  }
  const char* name = "all_reduce";
  const int dev = device_for(tensor, name);
  check_tensor(tensor, dev, name, "the tensor");
  check_reducible(tensor.dtype(), op, name);
  const ncclDataType_t dt = to_nccl(tensor.dtype(), name);
  const ncclRedOp_t rop = to_nccl(op);
  Tensor t = tensor;
  return run(name, dev, {t}, [t, dt, rop](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (t.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().AllReduce(t.data_ptr(), t.data_ptr(), t.numel(), dt, rop, comm, s), comm, where);
    t.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::broadcast(Tensor& tensor, int root) {
  if (is_complex(tensor.dtype())) {
    Tensor reals = as_reals(tensor);
    return broadcast(reals, root);
  }
  const char* name = "broadcast";
  const int dev = device_for(tensor, name);
  check_tensor(tensor, dev, name, "the tensor");
  check_root(root, name);
  const ncclDataType_t dt = to_nccl(tensor.dtype(), name);
  Tensor t = tensor;
  const bool receives = rank_ != root;
  return run(name, dev, {t}, [t, dt, root, receives](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (t.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().Broadcast(t.data_ptr(), t.data_ptr(), t.numel(), dt, root, comm, s), comm, where);
    if (receives) t.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce(Tensor& tensor, int root, ReduceOp op) {
  if (is_complex(tensor.dtype())) {
    check_complex_reduce(op, "reduce");
    Tensor reals = as_reals(tensor);
    return reduce(reals, root, op);
  }
  const char* name = "reduce";
  const int dev = device_for(tensor, name);
  check_tensor(tensor, dev, name, "the tensor");
  check_root(root, name);
  check_reducible(tensor.dtype(), op, name);
  const ncclDataType_t dt = to_nccl(tensor.dtype(), name);
  const ncclRedOp_t rop = to_nccl(op);
  Tensor t = tensor;
  const bool is_root = rank_ == root;
  // In place: NCCL writes the result on the root only; the others' tensors stay as they were.
  return run(name, dev, {t}, [t, dt, rop, root, is_root](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (t.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().Reduce(t.data_ptr(), t.data_ptr(), t.numel(), dt, rop, root, comm, s), comm, where);
    if (is_root) t.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  const char* name = "all_gather";
  const int dev = device_for(input, name);
  check_tensor(input, dev, name, "the input");
  EMBER_CHECK(static_cast<int>(outputs.size()) == size_, ValueError, name, ": expected ", size_,
              " output tensors (one per rank), got ", outputs.size());
  for (const Tensor& o : outputs) {
    check_tensor(o, dev, name, "an output tensor");
    EMBER_CHECK(o.dtype() == input.dtype(), TypeError, name, ": an output tensor has dtype ", dtype_name(o.dtype()),
                " but the input is ", dtype_name(input.dtype()));
    EMBER_CHECK(o.numel() == input.numel(), ValueError, name, ": an output tensor has shape ", o.shape_str(),
                " but the input has shape ", input.shape_str());
  }
  const ncclDataType_t dt = to_nccl(input.dtype(), name);
  // NCCL gathers into one buffer, copied out to the outputs on the NCCL stream.
  Tensor flat = empty({size_ * input.numel()}, input.dtype(), input.device());
  std::vector<Tensor> keep = outputs;
  keep.insert(keep.end(), {input, flat});
  return run(name, dev, keep, [outs = outputs, input, flat, dt](ncclComm_t comm, cudaStream_t s,
                                                                   const std::string& where) {
    if (input.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().AllGather(input.data_ptr(), flat.data_ptr(), input.numel(), dt, comm, s), comm, where);
    for (size_t r = 0; r < outs.size(); ++r) {
      copy_on(s, outs[r], bytes(flat) + r * nbytes(input));
      outs[r].bump_version();
    }
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::all_gather_into_tensor(Tensor& output, const Tensor& input) {
  const char* name = "all_gather_into_tensor";
  if (is_complex(input.dtype()) && output.dtype() == input.dtype()) {
    Tensor out_reals = as_reals(output);
    return all_gather_into_tensor(out_reals, as_reals(input));
  }
  const int dev = device_for(input, name);
  check_tensor(input, dev, name, "the input");
  check_tensor(output, dev, name, "the output");
  EMBER_CHECK(output.dtype() == input.dtype(), TypeError, name, ": output has dtype ", dtype_name(output.dtype()),
              " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK(output.numel() == size_ * input.numel(), ValueError, name, ": output of shape ", output.shape_str(),
              " should hold world_size (", size_, ") times the input of shape ", input.shape_str());
  const ncclDataType_t dt = to_nccl(input.dtype(), name);
  Tensor out = output;
  return run(name, dev, {out, input}, [out, input, dt](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (input.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().AllGather(input.data_ptr(), out.data_ptr(), input.numel(), dt, comm, s), comm, where);
    out.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) {
  const char* name = "reduce_scatter_tensor";
  if (is_complex(input.dtype()) && output.dtype() == input.dtype()) {
    check_complex_reduce(op, name);
    Tensor out_reals = as_reals(output);
    return reduce_scatter_tensor(out_reals, as_reals(input), op);
  }
  const int dev = device_for(input, name);
  check_tensor(input, dev, name, "the input");
  check_tensor(output, dev, name, "the output");
  check_reducible(input.dtype(), op, name);
  EMBER_CHECK(output.dtype() == input.dtype(), TypeError, name, ": output has dtype ", dtype_name(output.dtype()),
              " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK(input.numel() == size_ * output.numel(), ValueError, name, ": input of shape ", input.shape_str(),
              " should hold world_size (", size_, ") times the output of shape ", output.shape_str());
  const ncclDataType_t dt = to_nccl(input.dtype(), name);
  const ncclRedOp_t rop = to_nccl(op);
  Tensor out = output;
  return run(name, dev, {out, input}, [out, input, dt, rop](ncclComm_t comm, cudaStream_t s,
                                                           const std::string& where) {
    if (out.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().ReduceScatter(input.data_ptr(), out.data_ptr(), out.numel(), dt, rop, comm, s), comm,
                       where);
    out.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::gather(std::vector<Tensor>& outputs, const Tensor& input, int root) {
  const char* name = "gather";
  const int dev = device_for(input, name);
  check_tensor(input, dev, name, "the input");
  check_root(root, name);
  const bool is_root = rank_ == root;
  if (is_root) {
    EMBER_CHECK(static_cast<int>(outputs.size()) == size_, ValueError, name, ": expected ", size_,
                " output tensors (one per rank), got ", outputs.size());
    for (const Tensor& o : outputs) {
      check_tensor(o, dev, name, "an output tensor");
      EMBER_CHECK(o.dtype() == input.dtype() && o.numel() == input.numel(), ValueError, name,
                  ": an output tensor is ", dtype_name(o.dtype()), " of shape ", o.shape_str(), " but the input is ",
                  dtype_name(input.dtype()), " of shape ", input.shape_str());
    }
  }
  const ncclDataType_t dt = to_nccl(input.dtype(), name);
  std::vector<Tensor> outs = is_root ? outputs : std::vector<Tensor>{};
  std::vector<Tensor> keep = outs;
  keep.push_back(input);
  const int me = rank_;
  // Point-to-point messages to the root, grouped so NCCL runs them together;
  // the root copies its own part.
  return run(name, dev, keep, [outs, input, dt, root, me](ncclComm_t comm, cudaStream_t s,
                                                          const std::string& where) {
    if (input.numel() == 0) return;
    if (!outs.empty()) copy_on(s, outs[root], input.data_ptr());
    EMBER_NCCL_CHECK(nccl::api().GroupStart(), comm, where);
    if (outs.empty()) {
      EMBER_NCCL_CHECK(nccl::api().Send(input.data_ptr(), input.numel(), dt, root, comm, s), comm, where);
    } else {
      for (int r = 0; r < static_cast<int>(outs.size()); ++r)
        if (r != me) EMBER_NCCL_CHECK(nccl::api().Recv(outs[r].data_ptr(), outs[r].numel(), dt, r, comm, s), comm, where);
    }
    EMBER_NCCL_CHECK(nccl::api().GroupEnd(), comm, where);
    for (const Tensor& o : outs) o.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::scatter(Tensor& output, const std::vector<Tensor>& inputs, int root) {
  const char* name = "scatter";
  const int dev = device_for(output, name);
  check_tensor(output, dev, name, "the output");
  check_root(root, name);
  const bool is_root = rank_ == root;
  if (is_root) {
    EMBER_CHECK(static_cast<int>(inputs.size()) == size_, ValueError, name, ": expected ", size_,
                " input tensors (one per rank), got ", inputs.size());
    for (const Tensor& i : inputs) {
      check_tensor(i, dev, name, "an input tensor");
      EMBER_CHECK(i.dtype() == output.dtype() && i.numel() == output.numel(), ValueError, name,
                  ": an input tensor is ", dtype_name(i.dtype()), " of shape ", i.shape_str(), " but the output is ",
                  dtype_name(output.dtype()), " of shape ", output.shape_str());
    }
  }
  const ncclDataType_t dt = to_nccl(output.dtype(), name);
  std::vector<Tensor> ins = is_root ? inputs : std::vector<Tensor>{};
  std::vector<Tensor> keep = ins;
  Tensor out = output;
  keep.push_back(out);
  const int me = rank_;
  return run(name, dev, keep, [ins, out, dt, root, me](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (out.numel() > 0) {
      if (!ins.empty()) copy_on(s, out, ins[root].data_ptr());
      EMBER_NCCL_CHECK(nccl::api().GroupStart(), comm, where);
      if (ins.empty()) {
        EMBER_NCCL_CHECK(nccl::api().Recv(out.data_ptr(), out.numel(), dt, root, comm, s), comm, where);
      } else {
        for (int r = 0; r < static_cast<int>(ins.size()); ++r)
          if (r != me) EMBER_NCCL_CHECK(nccl::api().Send(ins[r].data_ptr(), ins[r].numel(), dt, r, comm, s), comm, where);
      }
      EMBER_NCCL_CHECK(nccl::api().GroupEnd(), comm, where);
    }
    out.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::barrier() {
  // An all_reduce of one element on the group's device (before the first
  // collective: the current device); the host waits for it.
  int dev;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    dev = comm_ ? comm_->device : cuda::current_device();
  }
  Tensor one = empty({1}, DType::Float32, Device(DeviceType::CUDA, dev));
  return run(
      "barrier", dev, {one},
      [one](ncclComm_t comm, cudaStream_t s, const std::string& where) {
        EMBER_CUDA_CHECK(cudaMemsetAsync(one.data_ptr(), 0, sizeof(float), s));
        EMBER_NCCL_CHECK(nccl::api().AllReduce(one.data_ptr(), one.data_ptr(), 1, ncclFloat32, ncclSum, comm, s), comm, where);
      },
      /*blocking=*/true);
}

std::shared_ptr<Work> ProcessGroupNCCL::send(const Tensor& tensor, int dst, int tag) {
  const char* name = "send";
  const int dev = device_for(tensor, name);
  check_tensor(tensor, dev, name, "the tensor");
  EMBER_CHECK(dst >= 0 && dst < size_ && dst != rank_, ValueError, "send: destination rank ", dst,
              " must be another rank of this group of size ", size_, " (this is rank ", rank_, ")");
  const ncclDataType_t dt = to_nccl(tensor.dtype(), name);
  (void)tag;  // NCCL has no tags: messages between two ranks match in order
  return run(name, dev, {tensor}, [tensor, dt, dst](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (tensor.numel() > 0)
      EMBER_NCCL_CHECK(nccl::api().Send(tensor.data_ptr(), tensor.numel(), dt, dst, comm, s), comm, where);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::recv(Tensor& tensor, int src, int tag) {
  const char* name = "recv";
  const int dev = device_for(tensor, name);
  check_tensor(tensor, dev, name, "the tensor");
  EMBER_CHECK(src >= 0 && src < size_ && src != rank_, ValueError, "recv: source rank ", src,
              " must be another rank of this group of size ", size_, " (this is rank ", rank_, ")");
  const ncclDataType_t dt = to_nccl(tensor.dtype(), name);
  (void)tag;
  Tensor t = tensor;
  return run(name, dev, {t}, [t, dt, src](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    if (t.numel() > 0) EMBER_NCCL_CHECK(nccl::api().Recv(t.data_ptr(), t.numel(), dt, src, comm, s), comm, where);
    t.bump_version();
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::all_to_all(Tensor& output, const Tensor& input,
                                                  const std::vector<int64_t>& output_splits,
                                                  const std::vector<int64_t>& input_splits) {
  const char* name = "all_to_all";
  const int dev = device_for(input, name);
  check_tensor(input, dev, name, "the input");
  check_tensor(output, dev, name, "the output");
  EMBER_CHECK(output.dtype() == input.dtype(), TypeError, name, ": output has dtype ", dtype_name(output.dtype()),
              " but the input is ", dtype_name(input.dtype()));
  const std::vector<int64_t> in_counts = all_to_all_counts(input, input_splits, size_, "input");
  const std::vector<int64_t> out_counts = all_to_all_counts(output, output_splits, size_, "output");
  EMBER_CHECK(in_counts[rank_] == out_counts[rank_], ValueError, name, ": rank ", rank_, " sends itself ",
              in_counts[rank_], " elements but its output split expects ", out_counts[rank_]);
  const ncclDataType_t dt = to_nccl(input.dtype(), name);
  Tensor out = output;
  const int me = rank_;
  // A send and a recv per peer, grouped so NCCL runs them together; our own
  // part is a device copy.
  return run(name, dev, {out, input}, [out, input, in_counts, out_counts, dt, me](
                                          ncclComm_t comm, cudaStream_t s, const std::string& where) {
    const size_t esize = input.element_size();
    size_t in_off = 0, out_off = 0;
    std::vector<size_t> in_offsets, out_offsets;
    for (size_t r = 0; r < in_counts.size(); ++r) {
      in_offsets.push_back(in_off);
      out_offsets.push_back(out_off);
      in_off += static_cast<size_t>(in_counts[r]) * esize;
      out_off += static_cast<size_t>(out_counts[r]) * esize;
    }
    if (in_counts[me] > 0)
      EMBER_CUDA_CHECK(cudaMemcpyAsync(bytes(out) + out_offsets[me], bytes(input) + in_offsets[me],
                                       static_cast<size_t>(in_counts[me]) * esize, cudaMemcpyDeviceToDevice, s));
    EMBER_NCCL_CHECK(nccl::api().GroupStart(), comm, where);
    for (int r = 0; r < static_cast<int>(in_counts.size()); ++r) {
      if (r == me) continue;
      if (in_counts[r] > 0)
        EMBER_NCCL_CHECK(nccl::api().Send(bytes(input) + in_offsets[r], in_counts[r], dt, r, comm, s), comm, where);
      if (out_counts[r] > 0)
        EMBER_NCCL_CHECK(nccl::api().Recv(bytes(out) + out_offsets[r], out_counts[r], dt, r, comm, s), comm, where);
    }
    EMBER_NCCL_CHECK(nccl::api().GroupEnd(), comm, where);
    out.bump_version();
  });
}

std::vector<std::shared_ptr<Work>> ProcessGroupNCCL::batch_send_recv(const std::vector<P2PMessage>& messages) {
  const char* name = "batch_isend_irecv";
  if (messages.empty()) return {};
  const int dev = device_for(messages.front().tensor, name);
  std::vector<Tensor> keep;
  std::vector<ncclDataType_t> dts;
  for (const P2PMessage& m : messages) {
    check_tensor(m.tensor, dev, name, m.is_send ? "a tensor to send" : "a tensor to receive into");
    EMBER_CHECK(m.peer >= 0 && m.peer < size_ && m.peer != rank_, ValueError, name, ": peer rank ", m.peer,
                " must be another rank of this group of size ", size_, " (this is rank ", rank_, ")");
    keep.push_back(m.tensor);
    dts.push_back(to_nccl(m.tensor.dtype(), name));
  }
  auto work = run(name, dev, keep, [messages, dts](ncclComm_t comm, cudaStream_t s, const std::string& where) {
    EMBER_NCCL_CHECK(nccl::api().GroupStart(), comm, where);
    for (size_t i = 0; i < messages.size(); ++i) {
      const P2PMessage& m = messages[i];
      if (m.tensor.numel() == 0) continue;
      if (m.is_send)
        EMBER_NCCL_CHECK(nccl::api().Send(m.tensor.data_ptr(), m.tensor.numel(), dts[i], m.peer, comm, s), comm, where);
      else
        EMBER_NCCL_CHECK(nccl::api().Recv(m.tensor.data_ptr(), m.tensor.numel(), dts[i], m.peer, comm, s), comm, where);
    }
    EMBER_NCCL_CHECK(nccl::api().GroupEnd(), comm, where);
    for (const P2PMessage& m : messages)
      if (!m.is_send) m.tensor.bump_version();
  });
  return std::vector<std::shared_ptr<Work>>(messages.size(), work);
}

}  // namespace nccl

std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                      ProcessGroupOptions options) {
  return std::make_shared<nccl::ProcessGroupNCCL>(std::move(store), rank, size, std::move(options));
}

}  // namespace ember::distributed
