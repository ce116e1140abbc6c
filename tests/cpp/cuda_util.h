// What the C++ tests that need a GPU share: the first GPU, and a guard that
// skips (with a warning naming why) where none is usable.
#pragma once
#include <ember/core/device.h>
#include <ember/cuda/cuda_api.h>

#include "catch.h"

namespace ember::test {

inline const Device kCuda0(DeviceType::CUDA, 0);

inline bool have_gpu() {
  if (cuda::is_available()) return true;
  WARN("skipped: no usable CUDA GPU: " << cuda::unavailable_reason());
  return false;
}

}  // namespace ember::test
