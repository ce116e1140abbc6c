// Which compiled GPU code can run on which GPU. A build holds SASS (machine
// code, "sm_XY") for some architectures and PTX ("compute_XY") for the last;
// checking a GPU against the list at first use turns CUDA's late "no kernel
// image is available" into an error that says how to rebuild.
#pragma once
#include <string>
#include <vector>

namespace ember::cuda {

// "sm_80;sm_90;compute_90" -> {"sm_80", "sm_90", "compute_90"}.
std::vector<std::string> parse_arch_list(const std::string& list);
// Whether code for `arch` runs on a GPU of compute capability major.minor:
// SASS sm_XY runs on X.Y' with Y' >= Y (same major; "a"/"f" variants only on
// X.Y exactly / the same major); PTX compute_XY on any X.Y or newer (JIT).
bool arch_runs_on(const std::string& arch, int major, int minor);
// Empty when some compiled arch runs on the GPU; otherwise the error message
// with the rebuild command.
std::string arch_mismatch(int device, const std::string& name, int major, int minor,
                          const std::vector<std::string>& archs);

}  // namespace ember::cuda
