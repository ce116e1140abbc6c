// Bindings into ember._C._distributed: Store, TCPStore and PrefixStore, as
// torch.distributed's. Values go in as str or bytes and come out as bytes;
// timeouts are datetime.timedelta (or seconds). Every call that can block
// releases the GIL so other Python threads (and the store's users) run.
#include <ember/distributed/tcp_store.h>

#include "bind.h"

namespace ember::python {

namespace {

using distributed::Bytes;
using distributed::Milliseconds;
using distributed::PrefixStore;
using distributed::Store;
using distributed::TCPStore;

Bytes to_bytes(py::handle obj, const char* what) {
  if (py::isinstance<py::bytes>(obj) || py::isinstance<py::bytearray>(obj)) {
    std::string s = py::isinstance<py::bytes>(obj) ? std::string(py::reinterpret_borrow<py::bytes>(obj))
                                                    : std::string(py::reinterpret_borrow<py::bytearray>(obj));
    return Bytes(s.begin(), s.end());
  }
  if (py::isinstance<py::str>(obj)) {
    std::string s = obj.cast<std::string>();  // UTF-8
    return Bytes(s.begin(), s.end());
  }
  throw TypeError(str(what, ": expected str or bytes, got ", type_name(obj)));
}

py::bytes to_py(const Bytes& b) { return py::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

// A datetime.timedelta or a number of seconds.
Milliseconds to_ms(py::handle obj, const char* what) {
  double seconds;
  if (py::hasattr(obj, "total_seconds"))
    seconds = obj.attr("total_seconds")().cast<double>();
  else if (py::isinstance<py::int_>(obj) || py::isinstance<py::float_>(obj))
    seconds = obj.cast<double>();
  else
    throw TypeError(str(what, ": timeout must be a datetime.timedelta or a number of seconds, got ", type_name(obj)));
  EMBER_CHECK(seconds >= 0, ValueError, what, ": timeout must not be negative, got ", seconds, " seconds");
  return Milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
}

py::object to_timedelta(Milliseconds ms) {
  return py::module_::import("datetime").attr("timedelta")(py::arg("milliseconds") = ms.count());
}

std::vector<std::string> to_keys(py::handle obj, const char* what) {
  if (py::isinstance<py::str>(obj)) throw TypeError(str(what, ": keys must be a list of str, got a str"));
  return cast_arg<std::vector<std::string>>(obj, what, "keys", "a list of str");
}

void bind_store(py::module_& d) {
  py::class_<Store, std::shared_ptr<Store>>(d, "Store", "A key-value store processes rendezvous through.")
      .def(
          "set",
          [](Store& s, const std::string& key, py::handle value) {
            Bytes v = to_bytes(value, "Store.set");
            py::gil_scoped_release nogil;
            s.set(key, v);
          },
          py::arg("key"), py::arg("value"))
      .def(
          "get",
          [](Store& s, const std::string& key) {
            Bytes v;
            {
              py::gil_scoped_release nogil;
              v = s.get(key);
            }
            return to_py(v);
          },
          py::arg("key"))
      .def("add", &Store::add, py::arg("key"), py::arg("amount"), py::call_guard<py::gil_scoped_release>())
      .def(
          "compare_set",
          [](Store& s, const std::string& key, py::handle expected, py::handle desired) {
            Bytes e = to_bytes(expected, "Store.compare_set"), v = to_bytes(desired, "Store.compare_set"), r;
            {
              py::gil_scoped_release nogil;
              r = s.compare_set(key, e, v);
            }
            return to_py(r);
          },
          py::arg("key"), py::arg("expected_value"), py::arg("desired_value"))
      .def(
          "check",
          [](Store& s, py::handle keys) {
            auto k = to_keys(keys, "Store.check");
            py::gil_scoped_release nogil;
            return s.check(k);
          },
          py::arg("keys"))
      .def(
          "wait",
          [](Store& s, py::handle keys, py::handle timeout) {
            auto k = to_keys(keys, "Store.wait");
            Milliseconds t = timeout.is_none() ? s.timeout() : to_ms(timeout, "Store.wait");
            py::gil_scoped_release nogil;
            s.wait(k, t);
          },
          py::arg("keys"), py::arg("timeout") = py::none())
      .def("delete_key", &Store::delete_key, py::arg("key"), py::call_guard<py::gil_scoped_release>())
      .def("num_keys", &Store::num_keys, py::call_guard<py::gil_scoped_release>())
      .def(
          "set_timeout", [](Store& s, py::handle t) { s.set_timeout(to_ms(t, "Store.set_timeout")); },
          py::arg("timeout"))
      .def_property_readonly("timeout", [](const Store& s) { return to_timedelta(s.timeout()); });
}

void bind_tcp_store(py::module_& d) {
  py::object default_timeout = to_timedelta(distributed::kDefaultStoreTimeout);
  py::class_<TCPStore, Store, std::shared_ptr<TCPStore>>(
      d, "TCPStore", "A store served over TCP by the master process (is_master=True), as torch's TCPStore.")
      .def(py::init([](const std::string& host, int64_t port, py::handle world_size, bool is_master,
                       py::handle timeout, bool wait_for_workers) {
             EMBER_CHECK(port >= 0 && port <= 65535, ValueError, "TCPStore: port must be in [0, 65535], got ", port);
             EMBER_CHECK(port != 0 || is_master, ValueError, "TCPStore: port 0 (any free port) needs is_master=True");
             std::optional<int64_t> ws;
             if (!world_size.is_none()) ws = cast_arg<int64_t>(world_size, "TCPStore", "world_size", "an int or None");
             Milliseconds t = to_ms(timeout, "TCPStore");
             py::gil_scoped_release nogil;
             return std::make_shared<TCPStore>(host, static_cast<uint16_t>(port), ws, is_master, t,
                                               wait_for_workers);
           }),
           py::arg("host_name"), py::arg("port"), py::arg("world_size") = py::none(), py::arg("is_master") = false,
           py::arg("timeout") = default_timeout, py::arg("wait_for_workers") = true)
      .def_property_readonly("host", &TCPStore::host)
      .def_property_readonly("port", &TCPStore::port)
      .def_property_readonly("world_size", &TCPStore::world_size)
      .def_property_readonly("is_master", &TCPStore::is_master)
      .def("__repr__", [](const TCPStore& s) {
        return str("TCPStore(host_name='", s.host(), "', port=", s.port(), ", is_master=",
                   s.is_master() ? "True" : "False", ")");
      });
}

void bind_prefix_store(py::module_& d) {
  py::class_<PrefixStore, Store, std::shared_ptr<PrefixStore>>(
      d, "PrefixStore", "Every key of `store` seen through '<prefix>/': a namespace inside a shared store.")
      .def(py::init([](std::string prefix, std::shared_ptr<Store> store) {
             EMBER_CHECK(store, TypeError, "PrefixStore: store must be a Store, got None");
             return std::make_shared<PrefixStore>(std::move(prefix), std::move(store));
           }),
           py::arg("prefix"), py::arg("store"))
      .def_property_readonly("underlying_store", &PrefixStore::inner);
}

}  // namespace

void init_distributed_store(py::module_& m) {
  py::module_ d = distributed_module(m);
  bind_store(d);
  bind_tcp_store(d);
  bind_prefix_store(d);
}

}  // namespace ember::python
