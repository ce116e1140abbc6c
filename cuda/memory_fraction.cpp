// ember.cuda.set_per_process_memory_fraction on a device's caching allocator.
#include <ember/cuda/memory_fraction.h>

#include <ember/cuda/caching_allocator.h>
#include <ember/cuda/context.h>

namespace ember::cuda {

void set_per_process_memory_fraction(double fraction, int index) {
  DeviceContext& ctx = Registry::get().device(index);
  set_allocator_memory_fraction(*ctx.allocator, fraction, ctx.props.totalGlobalMem);
}

double get_per_process_memory_fraction(int index) {
  return allocator_memory_fraction(*Registry::get().device(index).allocator);
}

}  // namespace ember::cuda
