// Kernels that only move elements (copies, gathers, scatters) work on their
// bytes: one instantiation per element size instead of one per dtype.
#pragma once
#include <cstddef>
#include <cstdint>

#include <ember/core/error.h>

namespace ember::cpu {

// N words of type W: an element moved whole, no more aligned than W.
template <class W, int N>
struct Words {
  W w[N];
};

// Calls f(E{}) with E an element type of `itemsize` bytes and at most the
// alignment of the dtypes that size has: unsigned integers up to 4 bytes,
// two uint32 for 8 (complex64 is only 4-byte aligned), two uint64 for 16.
// Words rather than arrays of unsigned char: a store of an unsigned char may
// alias any memory, so loops storing such arrays reloaded their pointers after
// every element.
template <class F>
void dispatch_size(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(Words<uint32_t, 2>{});
    case 16: return f(Words<uint64_t, 2>{});  // complex128
  }
  throw Error(str("unsupported element size ", itemsize));
}

}  // namespace ember::cpu
