// Definition of cuda/cast_typed.h's casting copies, run by the elementwise
// launcher. Half types are converted through float with round to nearest even
// (CUDA's __half / __nv_bfloat16 conversions), as on the CPU. Included only by
// the files that instantiate them.
#pragma once
#include <ember/cuda/cast_typed.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>

namespace ember::cuda::cast_typed {

namespace detail {

template <class D, class S>
void cast(const TensorIterator& it) {
  launch<D, S>(it, [] __device__(S x) { return convert<D>(x); });
}

}  // namespace detail

template <class D>
void cast_to(const TensorIterator& it, DType src) {
  dispatch_device(src, [&](auto s) { detail::cast<D, typename decltype(s)::type>(it); });
}

}  // namespace ember::cuda::cast_typed
