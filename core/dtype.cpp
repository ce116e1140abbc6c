#include <ember/core/dtype.h>

namespace ember {

size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "unknown";
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Table in enum order: Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64.
  using D = DType;
  static const D table[kNumDTypes][kNumDTypes] = {
      /* Bool  */ {D::Bool, D::UInt8, D::Int8, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* UInt8 */ {D::UInt8, D::UInt8, D::Int32 /*set below*/, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* Int8  */ {D::Int8, D::Int32, D::Int8, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* Int32 */ {D::Int32, D::Int32, D::Int32, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* Int64 */ {D::Int64, D::Int64, D::Int64, D::Int64, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* F16   */ {D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float32, D::Float32, D::Float64},
      /* BF16  */ {D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::Float32, D::BFloat16, D::Float32, D::Float64},
      /* F32   */ {D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float64},
      /* F64   */ {D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64},
  };
  // uint8 with int8 promotes to int16 in PyTorch; ember has no int16, so it uses int32.
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

namespace {
DType g_default_float = DType::Float32;
}
DType default_float_dtype() { return g_default_float; }
void set_default_float_dtype(DType t) {
  EMBER_CHECK(t == DType::Float32 || t == DType::Float64, TypeError,
              "set_default_dtype: only float32 and float64 are supported, got ", dtype_name(t));
  g_default_float = t;
}

}  // namespace ember
