// Kernels that only move elements (copies, gathers, scatters) work on their
// bytes: one instantiation per element size instead of one per dtype.
#pragma once
#include <cstddef>
#include <cstdint>

#include <ember/core/error.h>

namespace ember::cpu {

template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// Calls f(E{}) with E an element type of `itemsize` bytes: the unsigned
// integer of that size, and Bytes<16> for complex128. Integers rather than
// byte arrays: a store of an unsigned char may alias any memory, so loops
// storing Bytes<N> reloaded their pointers after every element.
template <class F>
void dispatch_size(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Bytes<16>{});  // complex128
  }
  throw Error(str("unsupported element size ", itemsize));
}

}  // namespace ember::cpu
