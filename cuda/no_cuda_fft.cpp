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

template void fft_c2c<float>(const std::complex<float>*, int64_t, int64_t, std::complex<float>*, int64_t, int64_t,
                             int64_t, int64_t, bool, int);
template void fft_c2c<double>(const std::complex<double>*, int64_t, int64_t, std::complex<double>*, int64_t,
                              int64_t, int64_t, int64_t, bool, int);
template void fft_r2c<float>(const float*, int64_t, int64_t, std::complex<float>*, int64_t, int64_t, int64_t,
                             int64_t, int);
template void fft_r2c<double>(const double*, int64_t, int64_t, std::complex<double>*, int64_t, int64_t, int64_t,
                              int64_t, int);
template void fft_c2r<float>(const std::complex<float>*, int64_t, int64_t, float*, int64_t, int64_t, int64_t,
                             int64_t, int);
template void fft_c2r<double>(const std::complex<double>*, int64_t, int64_t, double*, int64_t, int64_t, int64_t,
                              int64_t, int);

}  // namespace ember::cuda
