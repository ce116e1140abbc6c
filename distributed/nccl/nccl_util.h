// NCCL's names for ember's dtypes and reduce ops, and the error raised when
// an NCCL call fails (CUDA + NCCL builds only).
#pragma once
#include <string>

#include <nccl.h>

#include <ember/core/dtype.h>
#include <ember/distributed/process_group.h>

namespace ember::distributed::nccl {

// TypeError naming `op` for a dtype NCCL cannot carry (bool).
ncclDataType_t to_nccl(DType t, const char* op);
ncclRedOp_t to_nccl(ReduceOp op);

// ember::Error: `where` (the collective, its sequence number, the rank),
// NCCL's description of `result`, its last error message for `comm` (may be
// null) and what usually helps.
[[noreturn]] void raise_nccl_error(ncclResult_t result, ncclComm_t comm, const std::string& where, const char* call);

}  // namespace ember::distributed::nccl

// Checks an NCCL call made for the collective described by `where`.
#define EMBER_NCCL_CHECK(call, comm, where)                                         \
  do {                                                                              \
    const ncclResult_t ember_nccl_result_ = (call);                                 \
    if (ember_nccl_result_ != ncclSuccess)                                          \
      ::ember::distributed::nccl::raise_nccl_error(ember_nccl_result_, (comm), (where), #call); \
  } while (0)
