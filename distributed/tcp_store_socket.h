// Blocking TCP helpers for the store's client and server: deadlines, whole-
// buffer sends and exact reads that survive partial transfers and EINTR,
// connecting with retries, and listening with a clear "in use" error.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ember::distributed::net {

using Clock = std::chrono::steady_clock;

// A point in time an operation must finish by; `never()` waits forever.
class Deadline {
 public:
  static Deadline after(std::chrono::milliseconds d);  // d <= 0 means never
  static Deadline never() { return Deadline(); }
  bool infinite() const { return infinite_; }
  bool expired() const { return !infinite_ && Clock::now() >= at_; }
  // Milliseconds left for poll(): -1 when infinite, 0 when expired, rounded up.
  int poll_ms() const;
  Clock::time_point at() const { return at_; }

 private:
  bool infinite_ = true;
  Clock::time_point at_{};
};

// Why a transfer stopped: the deadline passed, or the connection is unusable.
struct IoError : std::runtime_error {
  IoError(const std::string& what, bool timed_out) : std::runtime_error(what), timed_out(timed_out) {}
  bool timed_out;
};

// Owns a file descriptor; closes it on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void close();

 private:
  int fd_ = -1;
};

// "<strerror(errno)>" for messages.
std::string errno_text(int err);

void set_nonblocking(int fd);

// Sends all n bytes; throws IoError on a closed peer, an error or the deadline.
void send_all(int fd, const void* data, size_t n, const Deadline& deadline);
// Reads exactly n bytes; throws IoError likewise (EOF is "closed by peer").
void recv_exact(int fd, void* data, size_t n, const Deadline& deadline);

// Connects to host:port, retrying refused or unreachable attempts (the server
// may start later) until the deadline. Throws IoError with the last reason.
Socket connect_with_retry(const std::string& host, uint16_t port, const Deadline& deadline);

// A non-blocking listening socket on every interface at `port` (0 picks a
// free one). Throws ember::Error naming host:port when the port is taken.
Socket listen_on(const std::string& host, uint16_t port);
uint16_t local_port(int fd);

}  // namespace ember::distributed::net
