#include <ember/distributed/process_group.h>

#include <ember/core/error.h>

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
