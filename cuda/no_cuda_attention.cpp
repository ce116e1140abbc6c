// Linked into CPU-only builds: the fused attention kernels. The front-end asks
// flash_attention_supported first, which says no, so the others are a safety net.
#include <ember/core/error.h>
#include <ember/cuda/attention.h>

namespace ember::cuda {

bool flash_attention_supported(int, int64_t) { return false; }

void flash_attention_forward(const FlashOperand&, Tensor&, const FlashOperand&, const FlashOperand&,
                             const FlashOperand&, int64_t, double, bool) {
  throw Error("scaled_dot_product_attention: ember was built without CUDA support; rebuild it on a machine with "
              "the CUDA toolkit");
}

void flash_attention_backward(Tensor&, const FlashOperand&, const FlashOperand&, Tensor&, const FlashOperand&,
                              const FlashOperand&, const FlashOperand&, const FlashOperand&, const FlashOperand&,
                              const Tensor&, int64_t, double, bool) {
  throw Error("scaled_dot_product_attention: ember was built without CUDA support; rebuild it on a machine with "
              "the CUDA toolkit");
}

}  // namespace ember::cuda
