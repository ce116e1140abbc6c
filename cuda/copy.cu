// Device-side strided, broadcasting and casting copies and fills, run by the
// elementwise launcher. Casts dispatch to cuda/cast_typed.h's kernels,
// compiled per destination dtype family in other files.
#include <ember/cuda/copy.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/cast_typed.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>

namespace ember::cuda {

namespace {

template <class U>
void move_bits(const TensorIterator& it) {
  launch<U, U>(it, [] __device__(U x) { return x; });
}

template <class U>
void fill_bits(const TensorIterator& it, U v) {
  launch<U>(it, [v] __device__() { return v; });
}

}  // namespace

void copy_on_device(Tensor& dst, const Tensor& src) {
  EMBER_CHECK(dst.device() == src.device() && dst.device().is_cuda(), Error,
              "copy: a device-side copy needs both tensors on one CUDA device, got ", dst.device().str(), " and ",
              src.device().str());
  DeviceGuard guard(dst.device().index);
  TensorIterator it({dst, src});
  if (it.numel() == 0) return;
  if (dst.dtype() == src.dtype()) {
    switch (itemsize(dst.dtype())) {
      case 1: return move_bits<uint8_t>(it);
      case 2: return move_bits<uint16_t>(it);
      case 4: return move_bits<uint32_t>(it);
      case 8: return move_bits<uint64_t>(it);
      default: break;  // complex tensors are copied as their float parts (core/ops/complex.cpp)
    }
    throw NotImplementedError(str("copy: no CUDA kernel moves ", itemsize(dst.dtype()), "-byte elements"));
  }
  dispatch_device(dst.dtype(), [&](auto d) { cast_typed::cast_to<typename decltype(d)::type>(it, src.dtype()); });
}

void fill(Tensor& t, const Scalar& value) {
  DeviceGuard guard(t.device().index);
  TensorIterator it({t});
  if (it.numel() == 0) return;
  // The value in t's dtype, converted on the host, then written as raw bits.
  dispatch(t.dtype(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) v = T(static_cast<float>(value.to_double()));
    else v = value.to<T>();
    using U = typename Bits<sizeof(T)>::type;
    U bits;
    std::memcpy(&bits, &v, sizeof(T));
    fill_bits<U>(it, bits);
  });
}

}  // namespace ember::cuda
