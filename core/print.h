// Print options for Tensor::str() (PyTorch's torch.set_printoptions).
#pragma once
#include <cstdint>
#include <optional>

namespace ember {

struct PrintOptions {
  int precision = 4;         // digits after the decimal point
  int64_t threshold = 1000;  // more elements than this are summarized with "..."
  int64_t edgeitems = 3;     // items kept at each end of a summarized dim
  int64_t linewidth = 80;    // characters per line before wrapping
  std::optional<bool> sci_mode;  // nullopt: chosen from the values
};

// The process-wide options; set_printoptions edits them.
PrintOptions& print_options();

}  // namespace ember
