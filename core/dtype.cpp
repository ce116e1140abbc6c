#include <ember/core/dtype.h>

namespace ember {

size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: case DType::Complex64: return 8;
    case DType::Complex128: return 16;
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
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
  }
  return "unknown";
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  using D = DType;
  // A complex dtype wins; its parts are at least as wide as the other side's
  // (complex64 with float64 gives complex128).
  if (is_complex(a) || is_complex(b)) {
    const bool wide = a == D::Complex128 || b == D::Complex128 || a == D::Float64 || b == D::Float64;
    return wide ? D::Complex128 : D::Complex64;
  }
  // Table in enum order: Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64.
  constexpr int kReal = 9;
  static const D table[kReal][kReal] = {
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

DType complex_dtype_for(DType t) {
  if (is_complex(t)) return t;
  return t == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

void throw_unsupported_dtype(DType t, const char* op, const char* what) {
  if (is_complex(t)) {
    throw NotImplementedError(str(op, ": not supported for complex tensors (got ", dtype_name(t),
                                  "); docs/complex.md lists the ops that take them"));
  }
  if (*what == 0) throw Error(str(op, ": unknown dtype"));
  throw TypeError(str(op, ": ", what, dtype_name(t)));
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
