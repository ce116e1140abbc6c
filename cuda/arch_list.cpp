#include <ember/cuda/arch_list.h>

#include <cctype>
#include <sstream>

#include <ember/core/error.h>

namespace ember::cuda {

std::vector<std::string> parse_arch_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool arch_runs_on(const std::string& arch, int major, int minor) {
  const bool ptx = arch.rfind("compute_", 0) == 0;
  const bool sass = arch.rfind("sm_", 0) == 0;
  if (!ptx && !sass) return false;
  std::string digits = arch.substr(ptx ? 8 : 3);
  char variant = 0;  // 'a': this exact GPU only; 'f': the family (same major)
  if (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
    variant = digits.back();
    digits.pop_back();
  }
  if (digits.size() < 2) return false;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  const int cc = std::stoi(digits);
  const int amaj = cc / 10, amin = cc % 10;
  if (variant == 'a') return major == amaj && minor == amin;
  if (variant == 'f') return major == amaj && minor >= amin;
  if (ptx) return major * 10 + minor >= cc;
  return major == amaj && minor >= amin;
}

std::string arch_mismatch(int device, const std::string& name, int major, int minor,
                          const std::vector<std::string>& archs) {
  for (const auto& a : archs) {
    if (arch_runs_on(a, major, minor)) return {};
  }
  std::string list;
  for (const auto& a : archs) list += (list.empty() ? "" : ", ") + a;
  return str("ember.cuda: GPU ", device, " (", name, ") has compute capability ", major, ".", minor,
             ", but this ember build has GPU code only for ", list.empty() ? "no architecture" : list,
             ", none of which can run on it (CUDA would fail with \"no kernel image is available for "
             "execution on the device\"). Rebuild ember for this GPU: EMBER_CUDA_ARCHS=", major, minor,
             " pip install .  (or add ", major, minor, " to the list, e.g. EMBER_CUDA_ARCHS=\"80;90;",
             major, minor, "\")");
}

}  // namespace ember::cuda
