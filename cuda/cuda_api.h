// The CUDA seam the core calls into. A CUDA build implements these in cuda/*.cu
// and cuda/*.cpp; a CPU build links cuda/no_cuda.cpp, where they report that
// ember was built without CUDA (or, for queries, answer "no GPU").
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace ember {
class Tensor;
namespace cuda {

bool is_available();
int device_count();
// Memory from the caching allocator of device `index`.
std::shared_ptr<void> allocate(size_t nbytes, int index);
// Copies between any two devices, src and dst of equal shape and dtype.
void copy(Tensor& dst, const Tensor& src);
// Why CUDA cannot be used, for error messages; empty when it can.
std::string unavailable_reason();

}  // namespace cuda
}  // namespace ember
