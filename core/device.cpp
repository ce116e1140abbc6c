#include <ember/core/device.h>

#include <ember/core/error.h>

namespace ember {

Device::Device(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (kind == "cpu") {
    type = DeviceType::CPU;
    index = -1;
    EMBER_CHECK(colon == std::string::npos || spec.substr(colon + 1) == "0", ValueError,
                "device: invalid device string '", spec, "'");
    return;
  }
  EMBER_CHECK(kind == "cuda", ValueError, "device: expected 'cpu', 'cuda' or 'cuda:N', got '", spec, "'");
  type = DeviceType::CUDA;
  index = 0;
  if (colon != std::string::npos) {
    const std::string num = spec.substr(colon + 1);
    EMBER_CHECK(!num.empty() && num.find_first_not_of("0123456789") == std::string::npos, ValueError,
                "device: invalid device index in '", spec, "'");
    index = std::stoi(num);
  }
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

}  // namespace ember
