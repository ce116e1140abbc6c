// Exceptions ember throws. The Python bindings map each class to the Python
// exception PyTorch raises in the same situation.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

struct Error : std::runtime_error {           // -> RuntimeError
  using std::runtime_error::runtime_error;
};
struct ValueError : Error { using Error::Error; };          // -> ValueError
struct TypeError : Error { using Error::Error; };           // -> TypeError
struct IndexError : Error { using Error::Error; };          // -> IndexError
struct NotImplementedError : Error { using Error::Error; }; // -> NotImplementedError
struct OutOfMemoryError : Error { using Error::Error; };    // -> ember.OutOfMemoryError (a RuntimeError)

namespace detail {
inline void append(std::ostringstream&) {}
template <class T, class... Rest>
void append(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  append(os, rest...);
}
}  // namespace detail

// Concatenates its arguments with operator<< into one message.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

}  // namespace ember

// EMBER_CHECK(cond, ErrorType, parts...): throws ErrorType(str(parts...)) when cond fails.
#define EMBER_CHECK(cond, ErrorType, ...)          \
  do {                                             \
    if (!(cond)) throw ErrorType(::ember::str(__VA_ARGS__)); \
  } while (0)
