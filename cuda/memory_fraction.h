// The per-process memory fraction of a CUDA device
// (ember.cuda.set_per_process_memory_fraction): the caching allocator refuses
// to reserve more than fraction * total device memory, raising
// OutOfMemoryError that names the fraction, after releasing its cache once.
//
// Kept apart from CachingAllocator's class: a member there would change
// caching_allocator.h, which about a hundred objects (CUDA kernels included)
// depend on. No CUDA headers here.
#pragma once
#include <cstddef>

namespace ember::cuda {

class CachingAllocator;

// Caps `allocator` at fraction * total_bytes (fraction in [0, 1]; ValueError otherwise).
void set_allocator_memory_fraction(CachingAllocator& allocator, double fraction, size_t total_bytes);
// The fraction set for `allocator` (1.0 when none was).
double allocator_memory_fraction(const CachingAllocator& allocator);
// The byte cap of `allocator` (0 when no fraction was set).
size_t allocator_memory_limit(const CachingAllocator& allocator);

// The device-level calls behind ember.cuda (-1: the current device). CPU
// builds raise "built without CUDA".
void set_per_process_memory_fraction(double fraction, int index = -1);
double get_per_process_memory_fraction(int index = -1);

}  // namespace ember::cuda
