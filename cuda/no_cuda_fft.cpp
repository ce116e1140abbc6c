// Linked into CPU-only builds: the FFT's CUDA entry points say that ember was
// built without CUDA. The front-end only calls them for CUDA tensors, which
// such a build cannot create, so this is a safety net.
#include <ember/core/error.h>
#include <ember/cuda/fft.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda_fft(const char* op) {
  throw Error(str("fft.", op, ": ember was built without CUDA support; rebuild it on a machine with the CUDA toolkit"));
}
}  // namespace

template <class T>
void fft_c2c(const std::complex<T>*, int64_t, int64_t, std::complex<T>*, int64_t, int64_t, int64_t, int64_t, bool,
             int) {
  no_cuda_fft("fft_c2c");
}

template <class T>
void fft_r2c(const T*, int64_t, int64_t, std::complex<T>*, int64_t, int64_t, int64_t, int64_t, int) {
  no_cuda_fft("fft_r2c");
}

template <class T>
void fft_c2r(const std::complex<T>*, int64_t, int64_t, T*, int64_t, int64_t, int64_t, int64_t, int) {
  no_cuda_fft("fft_c2r");
}

void fft_clear_plan_cache() {}

EMBER_CUDA_FFT_INSTANTIATE(float)
EMBER_CUDA_FFT_INSTANTIATE(double)

}  // namespace ember::cuda
