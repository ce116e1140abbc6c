// CPU-only builds: there is no device memory to cap.
#include <ember/core/error.h>
#include <ember/cuda/memory_fraction.h>

namespace ember::cuda {

void set_per_process_memory_fraction(double, int) {
  throw Error("ember.cuda.set_per_process_memory_fraction: ember was built without CUDA support");
}

double get_per_process_memory_fraction(int) {
  throw Error("ember.cuda.get_per_process_memory_fraction: ember was built without CUDA support");
}

}  // namespace ember::cuda
