// Autocast (automatic mixed precision): thread-local state saying, per device
// type, whether ops run in a lower precision, and the hook the op front-ends
// call first. Each op on PyTorch's autocast lists starts with
//
//   if (autocast::Scope ac{"matmul", a, b}; ac) return matmul(ac[0], ac[1]);
//
// The Scope looks the op up in the lists (autocast.cpp), casts the eligible
// inputs (floating point, not float64, on the autocast device type; an op
// whose kernel computes in float32 from half inputs itself gets them as they
// are, see float32_in_op) and, while it lives, turns autocast off for nested
// calls, so the recursive call and whatever it calls run the op body once, on
// the cast inputs. Casts are ordinary ops recorded by autograd: gradients
// reach the float32 leaves in float32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/tensor.h>

namespace ember::autocast {

bool is_enabled(DeviceType type);
void set_enabled(DeviceType type, bool enabled);
// float16 for CUDA, bfloat16 for the CPU unless set.
DType get_dtype(DeviceType type);
void set_dtype(DeviceType type, DType dtype);
bool is_cache_enabled();
void set_cache_enabled(bool enabled);

// autocast regions nest; the outermost exit clears the weight cast cache.
int64_t increment_nesting();
int64_t decrement_nesting();
void clear_cache();
// Instrumentation for tests: entries in the weight cast cache, and how many
// casts the cache has made (a parameter used by several ops is cast once).
size_t cache_size();
int64_t cache_casts();

// True when some device type has autocast on and no autocast op is running on
// this thread: the cheap test every hooked op makes first.
bool any_active();

class Scope {
 public:
  // op: the op's name in the lists; nullptr makes an inactive Scope (ops called
  // with an explicit dtype= are not autocast, as in PyTorch).
  template <class... Ts>
  explicit Scope(const char* op, const Ts&... inputs) {
    if (op == nullptr || !any_active()) return;
    const Tensor* ptrs[] = {&inputs...};
    enter(op, ptrs, sizeof...(Ts));
  }
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  explicit operator bool() const { return active_; }
  // The i-th input, cast (undefined stays undefined).
  const Tensor& operator[](size_t i) const { return inputs_[i]; }
  // The op is on the float32 list and reads float16/bfloat16 inputs itself,
  // in float32: the inputs are left as they are (no cast, no copy) and the op
  // must compute in float32 and return float32, as if they had been cast.
  bool float32_in_op() const { return float32_in_op_; }

 private:
  void enter(const char* op, const Tensor* const* inputs, size_t n);
  bool active_ = false;
  bool float32_in_op_ = false;
  std::vector<Tensor> inputs_;
};

}  // namespace ember::autocast
