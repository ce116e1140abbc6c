// Where a tensor's memory lives: the CPU or one CUDA device.
#pragma once
#include <cstdint>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = -1;  // -1 on the CPU; the CUDA ordinal otherwise

  Device() = default;
  Device(DeviceType t, int i = -1) : type(t), index(t == DeviceType::CPU ? -1 : (i < 0 ? 0 : i)) {}
  // Parses "cpu", "cuda", "cuda:1".
  explicit Device(const std::string& spec);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

inline const Device kCPU{};

}  // namespace ember
