// Bindings of scaled_dot_product_attention into ember._C._nn and of the
// switches behind ember.backends.cuda.enable_flash_sdp / enable_math_sdp.
#include "bind.h"

#include <ember/core/ops/attention.h>

namespace ember::python {

void init_attention(py::module_& m) {
  py::module_ nn = nn_module(m);
  nn.def(
      "scaled_dot_product_attention",
      [](const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask,
         double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
        return scaled_dot_product_attention(query, key, value, attn_mask ? *attn_mask : Tensor(), dropout_p,
                                            is_causal, scale, enable_gqa);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("scale") = py::none(),
      py::arg("enable_gqa") = false);
  // Why the fused kernel would not run ("" when it would), for tests and debugging.
  nn.def(
      "_flash_attention_blocker",
      [](const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask,
         double dropout_p, bool is_causal, bool enable_gqa) {
        return flash_attention_blocker(query, key, value, attn_mask ? *attn_mask : Tensor(), dropout_p, is_causal,
                                       enable_gqa);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("enable_gqa") = false);
  m.def("_set_flash_sdp_enabled", &set_flash_sdp_enabled, py::arg("enabled"));
  m.def("_flash_sdp_enabled", &flash_sdp_enabled);
  m.def("_set_math_sdp_enabled", &set_math_sdp_enabled, py::arg("enabled"));
  m.def("_math_sdp_enabled", &math_sdp_enabled);
}

}  // namespace ember::python
