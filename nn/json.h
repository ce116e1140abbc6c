// A small JSON reader/writer for safetensors headers (nn/serialize.cpp):
// objects keep their key order; numbers are kept as text. Writing escapes as
// Python's json.dumps does (ensure_ascii), which byte compatibility needs.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  std::string text;  // String contents or Number text
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;

  const Value* find(const std::string& key) const;
  bool is_int() const;  // a Number written without fraction or exponent
  long long as_int() const;
};

// Throws std::runtime_error with a short reason on malformed input.
Value parse(const std::string& text);
// "..." with Python's json.dumps escaping (non-ASCII as \uXXXX).
std::string quote(const std::string& utf8);

}  // namespace ember::json
