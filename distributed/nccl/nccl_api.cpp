#include "nccl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include <ember/core/error.h>

namespace ember::distributed::nccl {
namespace {

void* open_library(std::string& tried) {
  // By soname first: the copy already in the process (PyTorch's), else the
  // loader's search path; then the library this build was compiled against.
  for (const char* name : {"libnccl.so.2", EMBER_NCCL_LIBRARY_PATH}) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
    const char* why = dlerror();
    tried += str("\n  ", name, ": ", why ? why : "not found");
  }
  return nullptr;
}

template <class F>
void resolve(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  EMBER_CHECK(fn, Error, "nccl: libnccl.so.2 has no ", name, " (NCCL 2.18 or newer is needed)");
}

Api load() {
  std::string tried;
  void* lib = open_library(tried);
  EMBER_CHECK(lib, Error, "nccl: could not load the NCCL library (install NCCL 2, e.g. the libnccl2 package, or put "
              "libnccl.so.2 on LD_LIBRARY_PATH); tried:", tried);
  Api a{};
  resolve(lib, a.GetUniqueId, "ncclGetUniqueId");
  resolve(lib, a.CommInitRank, "ncclCommInitRank");
  resolve(lib, a.CommDestroy, "ncclCommDestroy");
  resolve(lib, a.CommAbort, "ncclCommAbort");
  resolve(lib, a.GetErrorString, "ncclGetErrorString");
  resolve(lib, a.GetLastError, "ncclGetLastError");
  resolve(lib, a.AllReduce, "ncclAllReduce");
  resolve(lib, a.Broadcast, "ncclBroadcast");
  resolve(lib, a.Reduce, "ncclReduce");
  resolve(lib, a.AllGather, "ncclAllGather");
  resolve(lib, a.ReduceScatter, "ncclReduceScatter");
  resolve(lib, a.Send, "ncclSend");
  resolve(lib, a.Recv, "ncclRecv");
  resolve(lib, a.GroupStart, "ncclGroupStart");
  resolve(lib, a.GroupEnd, "ncclGroupEnd");
  resolve(lib, a.GetVersion, "ncclGetVersion");
  return a;
}

}  // namespace

const Api& api() {
  // Not a function-local static initialised by load(): a failed load must be
  // retried (and raise again) at the next call, not leave a half-made Api.
  static std::mutex mu;
  static Api loaded{};
  static bool ok = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!ok) {
    loaded = load();
    ok = true;
  }
  return loaded;
}

}  // namespace ember::distributed::nccl

namespace ember::distributed {

int nccl_runtime_version() {
  int v = 0;
  nccl::api().GetVersion(&v);
  return v;
}

}  // namespace ember::distributed
