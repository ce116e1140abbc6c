// Byte counts for people: "512 bytes", "20.00 MiB", "139.81 GiB".
#pragma once
#include <cstddef>
#include <string>

namespace ember::cuda {

std::string format_bytes(size_t nbytes);

}  // namespace ember::cuda
