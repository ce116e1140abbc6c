// ember::save / ember::load from C++: named tensors as one safetensors file,
// byte-compatible with Python's ember.save of a plain dict of tensors (and so
// readable by Python's ember.load and any safetensors reader).
//
//   8 bytes   little-endian u64 N, the header length
//   N bytes   JSON {name: {"dtype", "shape", "data_offsets"}, "__metadata__": {...}}
//   rest      raw little-endian tensor data
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

namespace nn { class Module; }

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes atomically (temp file + rename): a crash leaves any old file intact.
// Dtypes: float32/64, float16, bfloat16, int64/32, int8, uint8, bool.
void save(const NamedTensors& tensors, const std::string& path);
// Reads a file written by either ember.save (in its saved key order) or any
// safetensors file (in header order); a truncated or foreign file -> ember::Error
// naming the path.
NamedTensors load(const std::string& path);

// A module's state_dict(), and load_state_dict() from a file (strict).
void save(const nn::Module& module, const std::string& path);
void load(nn::Module& module, const std::string& path);

}  // namespace ember
