// Bindings of the random family: generators and seeding, sampling functions,
// and the in-place Tensor fills, with torch's signatures.
#include "bind.h"
#include "default_device.h"

namespace ember::python {

namespace {

OptGenerator to_generator(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  EMBER_CHECK(py::isinstance<Generator>(obj), TypeError, "generator: expected an ember.Generator, got ",
              type_name(obj));
  return obj.cast<Generator>();
}

// Python ints in [-2^63, 2^64) as a 64-bit seed; negatives wrap like torch.
uint64_t to_seed(py::handle obj) {
  EMBER_CHECK(PyIndex_Check(obj.ptr()) && !py::isinstance<py::bool_>(obj), TypeError,
              "manual_seed: expected an int seed, got ", type_name(obj));
  py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!v) {  // PyIndex_Check passes any tensor; __index__ takes only a one-element integer one
    PyErr_Clear();
    throw TypeError(str("manual_seed: expected an int seed, got ", type_name(obj)));
  }
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(s);
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  throw Error(str("manual_seed: Overflow when unpacking long: seed ", std::string(py::str(obj)),
                  " does not fit in 64 bits"));
}

Tensor finish(Tensor t, bool requires_grad) {
  if (requires_grad) t.requires_grad_(true);
  return t;
}

Shape size_arg(const py::args& args, py::handle size, const char* op) {
  if (!size.is_none()) {
    EMBER_CHECK(args.size() == 0, TypeError, op, ": size given both positionally and as a keyword");
    return to_int_list(size, op);
  }
  EMBER_CHECK(args.size() > 0, TypeError, op, ": missing the size argument");
  return shape_from_args(args, op);
}

}  // namespace

void init_random(py::module_& m) {
  py::class_<Generator>(m, "Generator")
      .def(py::init([](py::object device) { return Generator(to_device(device)); }), py::arg("device") = "cpu")
      .def("manual_seed", [](Generator& g, py::object seed) {
        g.manual_seed(to_seed(seed));
        return g;
      }, py::arg("seed"))
      .def("seed", &Generator::seed)
      .def("initial_seed", &Generator::initial_seed)
      .def("get_state", &Generator::get_state)
      .def("set_state", [](Generator& g, const Tensor& state) {
        g.set_state(state);
        return g;
      }, py::arg("new_state"))
      .def_property_readonly("device", &Generator::device)
      .def("__repr__", [](const Generator& g) { return "<ember.Generator on " + g.device().str() + ">"; });

  m.attr("default_generator") = py::cast(default_generator(kCPU));
  m.def("manual_seed", [](py::object seed) { return manual_seed(to_seed(seed)); }, py::arg("seed"));
  m.def("seed", [] {
    const uint64_t s = default_generator(kCPU).seed();
    manual_seed(s);
    return s;
  });
  m.def("initial_seed", [] { return default_generator(kCPU).initial_seed(); });
  m.def("get_rng_state", [] { return default_generator(kCPU).get_state(); });
  m.def("set_rng_state", [](const Tensor& state) { default_generator(kCPU).set_state(state); },
        py::arg("new_state"));
  // Known-answer checks of the Philox block function (tests only).
  m.def("_philox4x32", [](std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) { return philox4x32(ctr, key); });

  auto sized = [&m](const char* name, auto make) {
    m.def(name, [make, name](py::args args, py::object size, py::object generator, py::object dtype,
                             py::object device, bool requires_grad) {
      const Shape shape = size_arg(args, size, name);
      const DType dt = to_optional_dtype(dtype).value_or(default_float_dtype());
      return finish(make(shape, dt, factory_device(device), to_generator(generator)), requires_grad);
    }, py::kw_only(), py::arg("size") = py::none(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
       py::arg("device") = py::none(), py::arg("requires_grad") = false);
  };
  sized("rand", [](const Shape& s, DType d, Device dev, OptGenerator g) { return rand(s, d, dev, g); });
  sized("randn", [](const Shape& s, DType d, Device dev, OptGenerator g) { return randn(s, d, dev, g); });

  // randint(high, size) or randint(low, high, size); low/high/size also as keywords.
  m.def("randint", [](py::args args, py::object low, py::object high, py::object size, py::object generator,
                      py::object dtype, py::object device, bool requires_grad) {
    std::vector<py::object> pos;
    for (auto a : args) pos.push_back(py::reinterpret_borrow<py::object>(a));
    EMBER_CHECK(pos.size() <= 3, TypeError, "randint: takes at most 3 positional arguments (low, high, size)");
    if (size.is_none() && !pos.empty() && !PyIndex_Check(pos.back().ptr())) {
      size = pos.back();
      pos.pop_back();
    }
    if (pos.size() == 2) {
      EMBER_CHECK(low.is_none() && high.is_none(), TypeError, "randint: low/high given twice");
      low = pos[0];
      high = pos[1];
    } else if (pos.size() == 1) {
      EMBER_CHECK(high.is_none(), TypeError, "randint: high given twice");
      high = pos[0];
    } else {
      EMBER_CHECK(pos.empty(), TypeError, "randint: expected (low, high, size) or (high, size)");
    }
    EMBER_CHECK(!high.is_none(), TypeError, "randint: missing the 'high' argument");
    EMBER_CHECK(!size.is_none(), TypeError, "randint: missing the 'size' argument");
    const int64_t lo = low.is_none() ? 0 : to_scalar(low, "randint").to_int();
    const int64_t hi = to_scalar(high, "randint").to_int();
    const DType dt = to_optional_dtype(dtype).value_or(DType::Int64);
    return finish(randint(lo, hi, to_int_list(size, "randint"), dt, factory_device(device), to_generator(generator)),
                  requires_grad);
  }, py::kw_only(), py::arg("low") = py::none(), py::arg("high") = py::none(), py::arg("size") = py::none(),
     py::arg("generator") = py::none(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
     py::arg("requires_grad") = false);

  m.def("randperm", [](int64_t n, py::object generator, py::object dtype, py::object device, bool requires_grad) {
    return finish(randperm(n, to_optional_dtype(dtype).value_or(DType::Int64), factory_device(device),
                           to_generator(generator)), requires_grad);
  }, py::arg("n"), py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
     py::arg("device") = py::none(), py::arg("requires_grad") = false);

  auto like = [&m](const char* name, auto make) {
    m.def(name, [make](const Tensor& t, py::object generator, py::object dtype, py::object layout, py::object device,
                       bool requires_grad, py::object memory_format, bool pin_memory) {  // the last two: as zeros_like
      Tensor out = make(t, to_optional_dtype(dtype), to_generator(generator));
      if (!device.is_none()) out = out.to(to_device(device));
      return finish(out, requires_grad);
    }, py::arg("input"), py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
       py::arg("layout") = py::none(), py::arg("device") = py::none(), py::arg("requires_grad") = false,
       py::arg("memory_format") = py::none(), py::arg("pin_memory") = false);
  };
  like("rand_like", [](const Tensor& t, std::optional<DType> d, OptGenerator g) { return rand_like(t, d, g); });
  like("randn_like", [](const Tensor& t, std::optional<DType> d, OptGenerator g) { return randn_like(t, d, g); });
  m.def("randint_like", [](const Tensor& t, py::object a, py::object b, py::object generator, py::object dtype,
                           py::object device, bool requires_grad) {
    const int64_t lo = b.is_none() ? 0 : to_scalar(a, "randint_like").to_int();
    const int64_t hi = to_scalar(b.is_none() ? a : b, "randint_like").to_int();
    Tensor out = randint_like(t, lo, hi, to_optional_dtype(dtype), to_generator(generator));
    if (!device.is_none()) out = out.to(to_device(device));
    return finish(out, requires_grad);
  }, py::arg("input"), py::arg("low"), py::arg("high") = py::none(), py::kw_only(), py::arg("generator") = py::none(),
     py::arg("dtype") = py::none(), py::arg("device") = py::none(), py::arg("requires_grad") = false);

  m.def("normal", [](py::object mean, py::object std, py::object size, py::object generator, py::object dtype,
                     py::object device, bool requires_grad) {
    const bool tm = py::isinstance<Tensor>(mean), ts = py::isinstance<Tensor>(std);
    const OptGenerator g = to_generator(generator);
    Tensor out;
    if (tm && ts) out = normal(mean.cast<Tensor>(), std.cast<Tensor>(), g);
    else if (tm) out = normal(mean.cast<Tensor>(), to_scalar(std, "normal").to_double(), g);
    else if (ts) out = normal(to_scalar(mean, "normal").to_double(), std.cast<Tensor>(), g);
    else {
      EMBER_CHECK(!size.is_none(), TypeError, "normal: with float mean and std, the size argument is required");
      out = normal(to_scalar(mean, "normal").to_double(), to_scalar(std, "normal").to_double(),
                   to_int_list(size, "normal"), to_optional_dtype(dtype).value_or(default_float_dtype()),
                   factory_device(device), g);
    }
    EMBER_CHECK(size.is_none() || !(tm || ts) || to_int_list(size, "normal") == out.shape(), Error,
                "normal: size ", shape_str(to_int_list(size, "normal")), " does not match the shape ",
                out.shape_str(), " of mean and std");
    return finish(out, requires_grad);
  }, py::arg("mean"), py::arg("std") = 1.0, py::arg("size") = py::none(), py::kw_only(),
     py::arg("generator") = py::none(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
     py::arg("requires_grad") = false);

  m.def("bernoulli", [](const Tensor& input, py::object p, py::object generator) {
    if (p.is_none()) return bernoulli(input, to_generator(generator));
    Tensor out = empty(input.shape(), input.dtype(), input.device());
    return bernoulli_(out, to_scalar(p, "bernoulli").to_double(), to_generator(generator));
  }, py::arg("input"), py::arg("p") = py::none(), py::kw_only(), py::arg("generator") = py::none());
  m.def("multinomial", [](const Tensor& input, int64_t num_samples, bool replacement, py::object generator) {
    return multinomial(input, num_samples, replacement, to_generator(generator));
  }, py::arg("input"), py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(),
     py::arg("generator") = py::none());

  auto& cls = tensor_class();
  cls.def("uniform_", [](Tensor& t, double from, double to, py::object generator) -> Tensor& {
    return uniform_(t, from, to, to_generator(generator));
  }, py::arg("from") = 0.0, py::arg("to") = 1.0, py::kw_only(), py::arg("generator") = py::none());
  cls.def("normal_", [](Tensor& t, double mean, double std, py::object generator) -> Tensor& {
    return normal_(t, mean, std, to_generator(generator));
  }, py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(), py::arg("generator") = py::none());
  cls.def("bernoulli_", [](Tensor& t, py::object p, py::object generator) -> Tensor& {
    if (py::isinstance<Tensor>(p)) return bernoulli_(t, p.cast<Tensor>(), to_generator(generator));
    return bernoulli_(t, to_scalar(p, "bernoulli_").to_double(), to_generator(generator));
  }, py::arg("p") = 0.5, py::kw_only(), py::arg("generator") = py::none());
  cls.def("exponential_", [](Tensor& t, double lambd, py::object generator) -> Tensor& {
    return exponential_(t, lambd, to_generator(generator));
  }, py::arg("lambd") = 1.0, py::kw_only(), py::arg("generator") = py::none());
  // random_(), random_(to), random_(from, to)
  cls.def("random_", [](Tensor& t, py::object a, py::object b, py::object generator) -> Tensor& {
    const OptGenerator g = to_generator(generator);
    if (a.is_none()) return random_(t, 0, std::nullopt, g);
    if (b.is_none()) return random_(t, 0, to_scalar(a, "random_").to_int(), g);
    return random_(t, to_scalar(a, "random_").to_int(), to_scalar(b, "random_").to_int(), g);
  }, py::arg("from") = py::none(), py::arg("to") = py::none(), py::kw_only(), py::arg("generator") = py::none());
  cls.def("bernoulli", [](const Tensor& t, py::object generator) { return bernoulli(t, to_generator(generator)); },
          py::kw_only(), py::arg("generator") = py::none());
  cls.def("multinomial", [](const Tensor& t, int64_t num_samples, bool replacement, py::object generator) {
    return multinomial(t, num_samples, replacement, to_generator(generator));
  }, py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(), py::arg("generator") = py::none());
}

}  // namespace ember::python
