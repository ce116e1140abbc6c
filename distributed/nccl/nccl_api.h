// NCCL's functions, loaded when the first nccl process group is made rather
// than linked: a process that imports ember and then PyTorch would otherwise
// hand PyTorch ember's libnccl.so.2 (same soname, maybe older), and PyTorch's
// import fails on a symbol that version lacks. Loading libnccl.so.2 by soname
// also reuses the copy PyTorch loaded when it came first.
#pragma once
#include <nccl.h>

namespace ember::distributed::nccl {

struct Api {
  decltype(&::ncclGetUniqueId) GetUniqueId;
  decltype(&::ncclCommInitRank) CommInitRank;
  decltype(&::ncclCommDestroy) CommDestroy;
  decltype(&::ncclCommAbort) CommAbort;
  decltype(&::ncclGetErrorString) GetErrorString;
  decltype(&::ncclGetLastError) GetLastError;
  decltype(&::ncclAllReduce) AllReduce;
  decltype(&::ncclBroadcast) Broadcast;
  decltype(&::ncclReduce) Reduce;
  decltype(&::ncclAllGather) AllGather;
  decltype(&::ncclReduceScatter) ReduceScatter;
  decltype(&::ncclSend) Send;
  decltype(&::ncclRecv) Recv;
  decltype(&::ncclGroupStart) GroupStart;
  decltype(&::ncclGroupEnd) GroupEnd;
  decltype(&::ncclGetVersion) GetVersion;
};

// The loaded library's functions; raises ember::Error saying what to install
// when libnccl.so.2 cannot be loaded.
const Api& api();

}  // namespace ember::distributed::nccl
