// ember.set_printoptions / get_printoptions: torch's printing knobs.
#include <ember/core/print.h>

#include "bind.h"

namespace ember::python {

void init_print(py::module_& m) {
  m.def("set_printoptions", [](py::object precision, py::object threshold, py::object edgeitems,
                               py::object linewidth, py::object profile, py::object sci_mode) {
    const char* op = "set_printoptions";
    PrintOptions& o = print_options();
    if (!profile.is_none()) {
      const std::string p = cast_arg<std::string>(profile, op, "profile", "a str");
      if (p == "default") o = PrintOptions{4, 1000, 3, 80, o.sci_mode};
      else if (p == "short") o = PrintOptions{2, 1000, 2, 80, o.sci_mode};
      else if (p == "full") o = PrintOptions{4, INT64_MAX, 3, 80, o.sci_mode};
      else throw ValueError(str("set_printoptions: unknown profile '", p, "' (expected default, short or full)"));
    }
    if (!precision.is_none()) o.precision = cast_arg<int>(precision, op, "precision", "an int");
    if (!threshold.is_none()) {
      // threshold=float('inf') is the usual way to print everything.
      const double t = cast_arg<double>(threshold, op, "threshold", "a number");
      o.threshold = t >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(t);
    }
    if (!edgeitems.is_none()) o.edgeitems = cast_arg<int64_t>(edgeitems, op, "edgeitems", "an int");
    if (!linewidth.is_none()) o.linewidth = cast_arg<int64_t>(linewidth, op, "linewidth", "an int");
    // Like torch, sci_mode is always replaced (None means automatic).
    o.sci_mode = std::nullopt;
    if (!sci_mode.is_none()) o.sci_mode = cast_arg<bool>(sci_mode, op, "sci_mode", "a bool or None");
    EMBER_CHECK(o.precision >= 0 && o.precision <= 100, ValueError, "set_printoptions: precision must be in [0, 100]");
    EMBER_CHECK(o.edgeitems >= 0 && o.linewidth > 0, ValueError,
                "set_printoptions: edgeitems must be >= 0 and linewidth > 0");
  }, py::arg("precision") = py::none(), py::arg("threshold") = py::none(), py::arg("edgeitems") = py::none(),
     py::arg("linewidth") = py::none(), py::arg("profile") = py::none(), py::arg("sci_mode") = py::none());
  m.def("get_printoptions", [] {
    const PrintOptions& o = print_options();
    py::dict d;
    d["precision"] = o.precision;
    d["threshold"] = o.threshold == INT64_MAX ? py::object(py::float_(INFINITY)) : py::object(py::int_(o.threshold));
    d["edgeitems"] = o.edgeitems;
    d["linewidth"] = o.linewidth;
    d["sci_mode"] = o.sci_mode ? py::object(py::bool_(*o.sci_mode)) : py::object(py::none());
    return d;
  });
}

}  // namespace ember::python
