// Facts recorded when ember was built (ember._C._build_info(), collect_env).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace ember::cuda {

// Ordered (key, value) pairs: version, build_type, compiler, cuda ("ON"/"OFF"),
// cuda_toolkit, cuda_compiler, cuda_archs ("sm_90;compute_90"), cudnn, nccl,
// gloo, blas. Values are empty where they do not apply.
std::vector<std::pair<std::string, std::string>> build_info();
// The GPU architectures compiled into this build ("sm_90", "compute_90").
std::vector<std::string> compiled_archs();

}  // namespace ember::cuda
