#include <ember/distributed/process_group.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/complex.h>

namespace ember::distributed {

#ifdef EMBER_HAS_GLOO
// distributed/gloo/process_group_gloo.cpp
std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                      ProcessGroupOptions options);
#endif
#ifdef EMBER_HAS_NCCL
// distributed/nccl/process_group_nccl.cpp
std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                      ProcessGroupOptions options);
#endif

Tensor as_reals(const Tensor& t) {
  NoGradGuard no_grad;
  return view_as_real(t);
}

void check_complex_reduce(ReduceOp op, const char* name) {
  EMBER_CHECK(op == ReduceOp::Sum || op == ReduceOp::Avg, Error, name, ": ReduceOp.", to_string(op),
              " is not supported for complex tensors (only SUM and AVG)");
}

std::string to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "SUM";
    case ReduceOp::Avg: return "AVG";
    case ReduceOp::Product: return "PRODUCT";
    case ReduceOp::Min: return "MIN";
    case ReduceOp::Max: return "MAX";
  }
  return "?";
}

std::shared_ptr<Work> ProcessGroup::all_to_all(Tensor&, const Tensor&, const std::vector<int64_t>&,
                                               const std::vector<int64_t>&) {
  throw NotImplementedError(str("all_to_all: the ", backend(), " backend does not support it"));
}

std::vector<std::shared_ptr<Work>> ProcessGroup::batch_send_recv(const std::vector<P2PMessage>& messages) {
  std::vector<std::shared_ptr<Work>> works;
  for (const P2PMessage& m : messages) {
    Tensor t = m.tensor;
    works.push_back(m.is_send ? send(t, m.peer, m.tag) : recv(t, m.peer, m.tag));
  }
  return works;
}

std::vector<int64_t> all_to_all_counts(const Tensor& t, const std::vector<int64_t>& splits, int size,
                                       const char* what) {
  EMBER_CHECK(t.defined(), ValueError, "all_to_all: got an undefined ", what);
  const int64_t rows = t.dim() == 0 ? 1 : t.shape()[0];
  const int64_t row_numel = rows == 0 ? 0 : t.numel() / rows;
  std::vector<int64_t> counts;
  if (splits.empty()) {
    EMBER_CHECK(rows % size == 0, ValueError, "all_to_all: the ", what, " of shape ", t.shape_str(),
                " cannot be split evenly along dim 0 into world_size (", size, ") parts; pass split sizes");
    counts.assign(size, rows / size * row_numel);
    return counts;
  }
  EMBER_CHECK(static_cast<int>(splits.size()) == size, ValueError, "all_to_all: ", what, " split sizes have ",
              splits.size(), " entries, expected world_size (", size, ")");
  int64_t total = 0;
  for (int64_t s : splits) {
    EMBER_CHECK(s >= 0, ValueError, "all_to_all: ", what, " split sizes must not be negative, got ", s);
    total += s;
    counts.push_back(s * row_numel);
  }
  EMBER_CHECK(total == rows, ValueError, "all_to_all: ", what, " split sizes add up to ", total,
              " but dim 0 of the ", what, " of shape ", t.shape_str(), " has ", rows, " rows");
  return counts;
}

bool gloo_available() {
#ifdef EMBER_HAS_GLOO
  return true;
#else
  return false;
#endif
}

#ifndef EMBER_HAS_NCCL
int nccl_runtime_version() { throw Error("nccl: this ember was built without NCCL (it needs a CUDA build with NCCL)"); }
#endif

bool nccl_available() {
#ifdef EMBER_HAS_NCCL
  return true;
#else
  return false;
#endif
}

std::shared_ptr<ProcessGroup> make_process_group(const std::string& backend, std::shared_ptr<Store> store,
                                                 int rank, int size, ProcessGroupOptions options) {
  EMBER_CHECK(size >= 1 && rank >= 0 && rank < size, ValueError, "init_process_group: rank ", rank,
              " is not in [0, world_size=", size, ")");
  if (backend == "gloo") {
#ifdef EMBER_HAS_GLOO
    return make_gloo_process_group(std::move(store), rank, size, options);
#else
    throw Error("init_process_group: this ember was built without gloo (install libgloo-dev and rebuild)");
#endif
  }
  if (backend == "nccl") {
#ifdef EMBER_HAS_NCCL
    return make_nccl_process_group(std::move(store), rank, size, options);
#else
    throw Error("init_process_group: this ember was built without NCCL (it needs a CUDA build with NCCL)");
#endif
  }
  throw ValueError(str("init_process_group: unknown backend '", backend, "' (use 'gloo' or 'nccl')"));
}

}  // namespace ember::distributed
