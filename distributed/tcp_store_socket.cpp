#include <ember/distributed/tcp_store_socket.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <ember/core/error.h>

namespace ember::distributed::net {

Deadline Deadline::after(std::chrono::milliseconds d) {
  Deadline dl;
  if (d.count() > 0) {
    dl.infinite_ = false;
    dl.at_ = Clock::now() + d;
  }
  return dl;
}

int Deadline::poll_ms() const {
  if (infinite_) return -1;
  auto left = at_ - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message (which may not be buf).
  return std::string(strerror_r(err, buf, sizeof buf));
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

namespace {

// Waits until fd is ready for `events`; false when the deadline passed.
bool wait_ready(int fd, short events, const Deadline& deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, deadline.poll_ms());
    if (r > 0) return true;  // readiness or an error/hangup the next call reports
    if (r == 0) return false;
    if (errno != EINTR) throw IoError("poll failed: " + errno_text(errno), false);
  }
}

}  // namespace

void send_all(int fd, const void* data, size_t n, const Deadline& deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLOUT, deadline)) throw IoError("timed out sending", true);
      continue;
    }
    throw IoError("send failed: " + errno_text(errno), false);
  }
}

void recv_exact(int fd, void* data, size_t n, const Deadline& deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = ::recv(fd, p, n, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k == 0) throw IoError("connection closed by peer", false);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(fd, POLLIN, deadline)) throw IoError("timed out receiving", true);
      continue;
    }
    throw IoError("receive failed: " + errno_text(errno), false);
  }
}

namespace {

// One non-blocking connect attempt to `ai`; returns a connected socket or sets
// `reason` and returns an invalid one.
Socket try_connect(const addrinfo* ai, const Deadline& deadline, std::string& reason) {
  Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
  if (!s.valid()) {
    reason = errno_text(errno);
    return Socket();
  }
  set_nonblocking(s.fd());
  int r = ::connect(s.fd(), ai->ai_addr, ai->ai_addrlen);
  if (r != 0 && errno != EINPROGRESS && errno != EINTR) {
    reason = errno_text(errno);
    return Socket();
  }
  if (r != 0) {
    if (!wait_ready(s.fd(), POLLOUT, deadline)) {
      reason = "connect timed out";
      return Socket();
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      reason = errno_text(err);
      return Socket();
    }
  }
  int one = 1;
  setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return s;
}

}  // namespace

Socket connect_with_retry(const std::string& host, uint16_t port, const Deadline& deadline) {
  std::string reason = "no attempt made";
  auto backoff = std::chrono::milliseconds(10);
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
    if (gai == 0) {
      for (addrinfo* ai = list; ai; ai = ai->ai_next) {
        Socket s = try_connect(ai, deadline, reason);
        if (s.valid()) {
          ::freeaddrinfo(list);
          return s;
        }
      }
      ::freeaddrinfo(list);
    } else {
      // The name may appear later (DNS of a starting cluster): retry too.
      reason = std::string("cannot resolve host: ") + gai_strerror(gai);
    }
    if (deadline.expired()) throw IoError(reason, true);
    // Sleep the backoff, but never past the deadline.
    auto nap = backoff;
    if (!deadline.infinite()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline.at() - Clock::now());
      nap = std::max(std::chrono::milliseconds(0), std::min(nap, left));
    }
    std::this_thread::sleep_for(nap);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

namespace {

// Binds an IPv6 dual-stack socket (also reachable through IPv4) or, where
// IPv6 is off, an IPv4 one. Returns the errno of a failed bind in `err`.
Socket bind_any(uint16_t port, int& err) {
  int one = 1;
  Socket s(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.valid()) {
    int zero = 0;
    setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(port);
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return s;
    err = errno;
    if (err == EADDRINUSE) return Socket();
  }
  s = Socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) {
    err = errno;
    return Socket();
  }
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(port);
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return s;
  err = errno;
  return Socket();
}

}  // namespace

Socket listen_on(const std::string& host, uint16_t port) {
  int err = 0;
  Socket s = bind_any(port, err);
  EMBER_CHECK(err != EADDRINUSE, Error, "TCPStore: address ", host, ":", port, " is already in use");
  EMBER_CHECK(s.valid(), Error, "TCPStore: cannot listen on ", host, ":", port, ": ", errno_text(err));
  if (::listen(s.fd(), SOMAXCONN) != 0) {
    int e = errno;
    EMBER_CHECK(e != EADDRINUSE, Error, "TCPStore: address ", host, ":", port, " is already in use");
    throw Error(str("TCPStore: cannot listen on ", host, ":", port, ": ", errno_text(e)));
  }
  set_nonblocking(s.fd());
  return s;
}

uint16_t local_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
}

}  // namespace ember::distributed::net
