#include <ember/cuda/format.h>

#include <cstdio>

namespace ember::cuda {

std::string format_bytes(size_t nbytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (nbytes < 1024) return std::to_string(nbytes) + (nbytes == 1 ? " byte" : " bytes");
  double v = static_cast<double>(nbytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace ember::cuda
