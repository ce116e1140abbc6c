#include "nccl_util.h"
#include "nccl_api.h"

#include <ember/core/error.h>

namespace ember::distributed::nccl {

ncclDataType_t to_nccl(DType t, const char* op) {
  switch (t) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::UInt8: return ncclUint8;
    case DType::Int8: return ncclInt8;
    case DType::Bool: break;
  }
  throw TypeError(str(op, ": the nccl backend does not support dtype ", dtype_name(t),
                      " (use uint8, or the gloo backend for CPU tensors)"));
}

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Product: return ncclProd;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
  }
  return ncclSum;
}

namespace {

const char* hint(ncclResult_t r) {
  switch (r) {
    case ncclSystemError:
    case ncclRemoteError:
      return "a peer may have exited or the network failed; run with NCCL_DEBUG=INFO (and "
             "NCCL_SOCKET_IFNAME=<interface> when the machine has several)";
    case ncclInvalidUsage:
    case ncclInvalidArgument:
      return "every rank must call the same collectives, in the same order, with the same sizes; "
             "two ranks may not share a GPU";
    case ncclUnhandledCudaError:
      return "a CUDA call inside NCCL failed; an earlier kernel may have failed (EMBER_LAUNCH_BLOCKING=1 "
             "pinpoints it)";
    default:
      return "run with NCCL_DEBUG=INFO for NCCL's own log";
  }
}

}  // namespace

void raise_nccl_error(ncclResult_t result, ncclComm_t comm, const std::string& where, const char* call) {
  std::string last;
  if (const char* s = nccl::api().GetLastError(comm)) last = s;
  throw Error(str(where, ": NCCL error in ", call, ": ", nccl::api().GetErrorString(result),
                  last.empty() ? std::string() : str(" (", last, ")"), "; ", hint(result)));
}

}  // namespace ember::distributed::nccl
