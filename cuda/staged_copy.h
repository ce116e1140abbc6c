// Copies between a CUDA tensor and a CPU tensor (or two CUDA tensors) of any
// layout and dtype, with the cast and broadcast done on the host. Dense
// same-dtype copies are one memcpy; everything else stages the memory a
// tensor spans through host memory, where the CPU copy kernel rearranges it.
// Correct for every layout; a device-side strided copy kernel will replace the
// staging for CUDA-to-CUDA copies.
//
// Bytes move through MemcpyBackend only, so this logic needs no CUDA headers
// and its tests run without a GPU (with host memory posing as the device's).
#pragma once
#include <cstddef>

namespace ember {
class Tensor;
namespace cuda {

struct MemcpyBackend {
  virtual ~MemcpyBackend() = default;
  virtual void to_device(void* dst, const void* src, size_t nbytes) = 0;
  // Returns once the bytes are in host memory.
  virtual void to_host(void* dst, const void* src, size_t nbytes) = 0;
  virtual void on_device(void* dst, const void* src, size_t nbytes) = 0;
};

// dst = src cast to dst's dtype and broadcast to its shape; at least one of
// them is on a CUDA device.
void staged_copy(Tensor& dst, const Tensor& src, MemcpyBackend& mem);

}  // namespace cuda
}  // namespace ember
