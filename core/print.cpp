// Tensor::str(): PyTorch's repr format. One formatter per tensor picks a
// common style from the printed values (integral floats as "1.", fixed point,
// or scientific) and a column width; the nested brackets, line wrapping,
// summarization with "..." and the suffixes follow torch/_tensor_str.py.
#include <ember/core/print.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include <ember/autograd/node.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/shape.h>
#include <ember/core/tensor.h>

namespace ember {

PrintOptions& print_options() {
  static PrintOptions opts;
  return opts;
}

namespace {

// One element of a CPU tensor, `offset` elements into its storage.
double float_at(const Tensor& t, int64_t offset) {
  return dispatch(t.dtype(), "print", [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    const T x = static_cast<const T*>(t.storage().data())[offset];
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(x);
    else return static_cast<double>(x);
  });
}

int64_t int_at(const Tensor& t, int64_t offset) {
  return dispatch(t.dtype(), "print", [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(static_cast<const T*>(t.storage().data())[offset]);
    else return 0;
  });
}

std::string printf_str(const char* fmt, int precision, double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, precision, v);
  return buf;
}

// Python's spelling of non-finite floats.
std::string nonfinite_str(double v) { return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }

// Calls f(offset) for every element that is printed: all of them, or only the
// edge items of each dim when summarizing.
void for_each_printed(const Tensor& t, bool summarize, const std::function<void(int64_t)>& f) {
  const int64_t edge = print_options().edgeitems;
  std::function<void(int64_t, int64_t)> rec = [&](int64_t dim, int64_t offset) {
    if (dim == t.dim()) return f(offset);
    const int64_t n = t.shape()[dim];
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * edge && i >= edge && i < n - edge) continue;
      rec(dim + 1, offset + i * t.strides()[dim]);
    }
  };
  rec(0, t.storage_offset());
}

class Formatter {
 public:
  Formatter(const Tensor& t, bool summarize) : t_(t), precision_(print_options().precision) {
    if (t.dtype() == DType::Bool || is_integral(t.dtype())) {
      for_each_printed(t, summarize, [&](int64_t off) { width_ = std::max(width_, raw(off).size()); });
      return;
    }
    floating_ = true;
    std::vector<double> vals;  // the non-zero finite values decide the style
    for_each_printed(t, summarize, [&](int64_t off) {
      const double v = float_at(t, off);
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    });
    if (!vals.empty()) {
      double lo = INFINITY, hi = 0;
      for (double v : vals) {
        lo = std::min(lo, std::fabs(v));
        hi = std::max(hi, std::fabs(v));
        if (v != std::ceil(v)) int_mode_ = false;
      }
      if (hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4)) sci_ = true;
      for (double v : vals) {
        const size_t len = sci_ ? printf_str("%.*e", precision_, v).size()
                           : int_mode_ ? printf_str("%.*f", 0, v).size() + 1
                                       : printf_str("%.*f", precision_, v).size();
        width_ = std::max(width_, len);
      }
    }
    if (print_options().sci_mode) sci_ = *print_options().sci_mode;
  }

  size_t width() const { return width_; }

  // The element at `offset`, right-aligned to the common width.
  std::string format(int64_t offset) const {
    const std::string s = raw(offset);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

 private:
  std::string raw(int64_t offset) const {
    if (t_.dtype() == DType::Bool) return int_at(t_, offset) ? "True" : "False";
    if (!floating_) return std::to_string(int_at(t_, offset));
    const double v = float_at(t_, offset);
    if (!std::isfinite(v)) return nonfinite_str(v);
    if (sci_) return printf_str("%.*e", precision_, v);
    if (int_mode_) return printf_str("%.*f", 0, v) + ".";
    return printf_str("%.*f", precision_, v);
  }

  const Tensor& t_;
  int precision_;
  bool floating_ = false, int_mode_ = true, sci_ = false;
  size_t width_ = 1;
};

// Complex elements as "re+imj": one Formatter for the real parts and one for
// the imaginary parts, as torch's; offsets are in complex elements.
class ComplexFormatter {
 public:
  ComplexFormatter(const Tensor& z, bool summarize)
      : parts_(view_as_real(z)),
        re_parts_(select(parts_, -1, 0)),
        im_parts_(select(parts_, -1, 1)),
        re_(re_parts_, summarize),
        im_(im_parts_, summarize) {}

  size_t width() const { return re_.width() + im_.width() + 1; }

  std::string format(int64_t offset) const {
    std::string im = im_.format(2 * offset + 1) + "j";
    im.erase(0, im.find_first_not_of(' '));
    const bool signed_im = im[0] == '-' || im[0] == '+';
    return re_.format(2 * offset) + (signed_im ? "" : "+") + im;
  }

 private:
  Tensor parts_, re_parts_, im_parts_;  // the Formatters keep references to these
  Formatter re_, im_;
};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

template <class Fmt>
std::string vector_str(const Tensor& t, int64_t offset, int64_t indent, bool summarize, const Fmt& fmt) {
  const auto& opts = print_options();
  const int64_t n = t.shape().back(), stride = t.strides().back();
  const int64_t per_line =
      std::max<int64_t>(1, (opts.linewidth - indent) / static_cast<int64_t>(fmt.width() + 2));
  std::vector<std::string> data;
  if (summarize && opts.edgeitems == 0) {
    data.push_back("...");
  } else {
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * opts.edgeitems && i >= opts.edgeitems && i < n - opts.edgeitems) {
        if (i == opts.edgeitems) data.push_back(" ...");
        continue;
      }
      data.push_back(fmt.format(offset + i * stride));
    }
  }
  std::vector<std::string> lines;
  for (size_t i = 0; i < data.size(); i += static_cast<size_t>(per_line)) {
    const auto end = data.begin() + std::min(data.size(), i + static_cast<size_t>(per_line));
    lines.push_back(join(std::vector<std::string>(data.begin() + static_cast<int64_t>(i), end), ", "));
  }
  return "[" + join(lines, ",\n" + std::string(indent + 1, ' ')) + "]";
}

template <class Fmt>
std::string tensor_str(const Tensor& t, int64_t dim, int64_t offset, int64_t indent, bool summarize,
                       const Fmt& fmt) {
  const int64_t remaining = t.dim() - dim;
  if (remaining == 0) return fmt.format(offset);
  if (remaining == 1) return vector_str(t, offset, indent, summarize, fmt);
  const int64_t n = t.shape()[dim], edge = print_options().edgeitems;
  std::vector<std::string> slices;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * edge && i >= edge && i < n - edge) {
      if (i == edge) slices.push_back("...");
      continue;
    }
    slices.push_back(tensor_str(t, dim + 1, offset + i * t.strides()[dim], indent + 1, summarize, fmt));
  }
  return "[" + join(slices, "," + std::string(remaining - 1, '\n') + std::string(indent + 1, ' ')) + "]";
}

// Python's str() of a shape tuple: (0,), (0, 3).
std::string tuple_str(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// Appends ", suffix" or, when the line would pass linewidth, ",\n<indent>suffix".
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, int64_t indent) {
  std::string out = body;
  const size_t nl = body.rfind('\n');
  // torch's count (off by two without a newline), kept so wrapping matches.
  int64_t last_line = static_cast<int64_t>(body.size()) - (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  for (const auto& s : suffixes) {
    const int64_t len = static_cast<int64_t>(s.size());
    if (last_line + len + 2 > print_options().linewidth) {
      out += ",\n" + std::string(indent, ' ') + s;
      last_line = indent + len;
    } else {
      out += ", " + s;
      last_line += len + 2;
    }
  }
  return out + ")";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  if (!device().is_cpu()) suffixes.push_back("device='" + device().str() + "'");
  std::string body;
  const DType dt = dtype();
  const bool default_dtype = dt == default_float_dtype() || dt == complex_dtype_for(default_float_dtype());
  if (numel() == 0) {
    if (dim() != 1) suffixes.push_back("size=" + tuple_str(shape()));
    if (dt != default_float_dtype()) suffixes.push_back(std::string("dtype=ember.") + dtype_name(dt));
    body = "[]";
  } else {
    if (!default_dtype && dt != DType::Int64 && dt != DType::Bool) {
      suffixes.push_back(std::string("dtype=ember.") + dtype_name(dt));
    }
    const Tensor c = device().is_cpu() ? detach() : detach().cpu();
    const bool summarize = numel() > print_options().threshold;
    if (is_complex(dt)) {
      const ComplexFormatter fmt(c, summarize);
      body = tensor_str(c, 0, c.storage_offset(), indent, summarize, fmt);
    } else {
      const Formatter fmt(c, summarize);
      body = tensor_str(c, 0, c.storage_offset(), indent, summarize, fmt);
    }
  }
  if (grad_fn()) {
    suffixes.push_back("grad_fn=<" + grad_fn()->name() + ">");
  } else if (requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace ember
