// Kernels that only move elements (copies, gathers, scatters) work on their
// bytes: one instantiation per element size instead of one per dtype.
#pragma once
#include <cstddef>

#include <ember/core/error.h>

namespace ember::cpu {

template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// Calls f(Bytes<itemsize>{}) for the element sizes ember's dtypes have.
template <class F>
void dispatch_size(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(Bytes<1>{});
    case 2: return f(Bytes<2>{});
    case 4: return f(Bytes<4>{});
    case 8: return f(Bytes<8>{});
    case 16: return f(Bytes<16>{});  // complex128
  }
  throw Error(str("unsupported element size ", itemsize));
}

}  // namespace ember::cpu
