// Internal to the composite ops (core/ops/composite_*.cpp, einsum.cpp): an
// error raised by an op a composite is built of gets the composite's name in
// front, keeping its type, so "hstack: cat: sizes of tensors must match ..."
// says which call the user made.
#pragma once
#include <ember/core/error.h>

namespace ember::composite {

template <class F>
auto as_op(const char* op, F&& f) -> decltype(f()) {
  auto named = [op](const Error& e) { return str(op, ": ", e.what()); };
  try {
    return f();
  } catch (const OutOfMemoryError&) {
    throw;
  } catch (const IndexError& e) {
    throw IndexError(named(e));
  } catch (const ValueError& e) {
    throw ValueError(named(e));
  } catch (const TypeError& e) {
    throw TypeError(named(e));
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(named(e));
  } catch (const Error& e) {
    throw Error(named(e));
  }
}

}  // namespace ember::composite
