// ember::save / ember::load from C++: named tensors as one safetensors file,
// byte-compatible with Python's ember.save of a plain dict of tensors (and so
// readable by Python's ember.load and any safetensors reader).
//
//   8 bytes   little-endian u64 N, the header length
//   N bytes   JSON {name: {"dtype", "shape", "data_offsets"}, "__metadata__": {...}}
//   rest      raw little-endian tensor data
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/nn/json.h>

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

// The file layer under save/load, shared with optim/serialize.cpp: tensors
// under their file names plus the JSON "structure" Python's ember.save writes
// ({"D": [[key, value], ...]}, {"L": [...]}, {"U": [...]}, {"T": name}, plain
// JSON values), which is how nested state dicts round-trip with Python.
namespace serialize_detail {
void write_file(const std::map<std::string, Tensor>& tensors, const std::string& structure, const std::string& path);
// Every tensor by file name (and in header order); returns the structure (Null if none).
json::Value read_file(const std::string& path, std::map<std::string, Tensor>& tensors, NamedTensors& header_order);
}  // namespace serialize_detail

}  // namespace ember
