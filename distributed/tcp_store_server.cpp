#include <ember/distributed/tcp_store_server.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <ember/core/error.h>

namespace ember::distributed {

using wire::Command;
using wire::Status;

TCPStoreServer::TCPStoreServer(const std::string& host, uint16_t port) : listener_(net::listen_on(host, port)) {
  port_ = net::local_port(listener_.fd());
  int fds[2];
  EMBER_CHECK(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0, Error, "TCPStore: cannot create a pipe: ",
              net::errno_text(errno));
  wake_read_ = fds[0];
  wake_write_ = fds[1];
  thread_ = std::thread([this] { run(); });
}

TCPStoreServer::~TCPStoreServer() {
  stop_ = true;
  char b = 1;
  while (::write(wake_write_, &b, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
  ::close(wake_read_);
  ::close(wake_write_);
}

void TCPStoreServer::run() {
  std::vector<pollfd> fds;
  while (!stop_) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listener_.fd(), POLLIN, 0});
    for (auto& [fd, c] : connections_) {
      short ev = POLLIN;
      if (c.out_sent < c.out.size()) ev |= POLLOUT;
      fds.push_back({fd, ev, 0});
    }
    int r = ::poll(fds.data(), fds.size(), next_deadline_ms());
    if (r < 0 && errno != EINTR) break;  // cannot happen with valid fds; stop rather than spin
    if (stop_) break;
    if (r > 0) {
      if (fds[1].revents & POLLIN) accept_clients();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto it = connections_.find(fds[i].fd);
        if (it == connections_.end()) continue;
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(it->second);
        if (fds[i].revents & POLLOUT) write_to(it->second);
      }
    }
    expire_waiters();
    // Requests held behind an answered wait, and closed peers.
    for (auto it = connections_.begin(); it != connections_.end();) {
      Connection& c = it->second;
      if (!c.closing) handle_messages(c);
      if (c.closing) {
        const int fd = it->first;
        waiters_.remove_if([fd](const Waiter& w) { return w.fd == fd; });
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  connections_.clear();
}

void TCPStoreServer::accept_clients() {
  for (;;) {
    int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: no more pending; EMFILE etc.: retry on the next poll
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connections_[fd].socket = net::Socket(fd);
  }
}

void TCPStoreServer::read_from(Connection& c) {
  uint8_t buf[64 * 1024];
  for (;;) {
    ssize_t k = ::recv(c.socket.fd(), buf, sizeof buf, 0);
    if (k > 0) {
      c.in.insert(c.in.end(), buf, buf + k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.closing = true;  // EOF or a reset: the client is gone
    return;
  }
}

void TCPStoreServer::write_to(Connection& c) {
  while (c.out_sent < c.out.size()) {
    ssize_t k = ::send(c.socket.fd(), c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (k > 0) {
      c.out_sent += static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.closing = true;
    return;
  }
  c.out.clear();
  c.out_sent = 0;
}

void TCPStoreServer::reply(Connection& c, const wire::Writer& w) {
  Bytes msg = w.framed();
  c.out.insert(c.out.end(), msg.begin(), msg.end());
  write_to(c);
}

void TCPStoreServer::handle_messages(Connection& c) {
  size_t pos = 0;
  while (!c.blocked && !c.closing && c.in.size() - pos >= 4) {
    uint32_t n = wire::read_length(c.in.data() + pos);
    if (n == 0 || n > wire::kMaxMessageBytes) {
      c.closing = true;  // not a TCPStore client
      break;
    }
    if (c.in.size() - pos - 4 < n) break;
    wire::Reader r(c.in.data() + pos + 4, n);
    pos += 4 + n;
    try {
      handle(c, r);
    } catch (const Error&) {
      c.closing = true;  // malformed request
    }
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(pos));
}

int64_t TCPStoreServer::parse_int(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return 0;
  std::string s(it->second.begin(), it->second.end());
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  EMBER_CHECK(!s.empty() && end == s.c_str() + s.size() && errno == 0, ValueError,
              "TCPStore: add: the value of key '", key, "' is not an integer");
  return v;
}

void TCPStoreServer::handle(Connection& c, wire::Reader& r) {
  const auto command = static_cast<Command>(r.u8());
  wire::Writer out;
  switch (command) {
    case Command::Set: {
      std::string key = r.str();
      data_[key] = r.bytes();
      reply(c, out.u8(static_cast<uint8_t>(Status::Ok)));
      wake_waiters(key);
      return;
    }
    case Command::Add: {
      std::string key = r.str();
      int64_t delta = r.i64();
      int64_t sum = 0;
      try {
        sum = parse_int(key) + delta;
      } catch (const ValueError& e) {
        reply(c, out.u8(static_cast<uint8_t>(Status::Failed)).str(e.what()));
        return;
      }
      std::string text = std::to_string(sum);
      data_[key] = Bytes(text.begin(), text.end());
      reply(c, out.u8(static_cast<uint8_t>(Status::Ok)).i64(sum));
      wake_waiters(key);
      return;
    }
    case Command::CompareSet: {
      std::string key = r.str();
      Bytes expected = r.bytes();
      Bytes desired = r.bytes();
      auto it = data_.find(key);
      out.u8(static_cast<uint8_t>(Status::Ok));
      if (it == data_.end()) {
        // As PyTorch: an absent key is created only when nothing was expected.
        if (!expected.empty()) {
          reply(c, out.bytes(expected));
          return;
        }
        data_[key] = desired;
        reply(c, out.bytes(desired));
        wake_waiters(key);
        return;
      }
      if (it->second == expected) it->second = desired;
      reply(c, out.bytes(it->second));
      wake_waiters(key);
      return;
    }
    case Command::Check: {
      uint32_t n = r.u32();
      bool all = true;
      for (uint32_t i = 0; i < n; ++i) all = data_.count(r.str()) && all;
      reply(c, out.u8(static_cast<uint8_t>(Status::Ok)).u8(all ? 1 : 0));
      return;
    }
    case Command::Delete: {
      bool existed = data_.erase(r.str()) > 0;
      reply(c, out.u8(static_cast<uint8_t>(Status::Ok)).u8(existed ? 1 : 0));
      return;
    }
    case Command::NumKeys:
      reply(c, out.u8(static_cast<uint8_t>(Status::Ok)).i64(static_cast<int64_t>(data_.size())));
      return;
    case Command::Get:
    case Command::Wait:
    case Command::WaitAtLeast: {
      Waiter w{c.socket.fd(), command, {}, 0, net::Deadline::never()};
      if (command == Command::Get) {
        w.keys.push_back(r.str());
        w.deadline = net::Deadline::after(std::chrono::milliseconds(r.i64()));
      } else if (command == Command::Wait) {
        int64_t ms = r.i64();
        uint32_t n = r.u32();
        for (uint32_t i = 0; i < n; ++i) w.keys.push_back(r.str());
        w.deadline = net::Deadline::after(std::chrono::milliseconds(ms));
      } else {
        w.keys.push_back(r.str());
        w.target = r.i64();
        w.deadline = net::Deadline::after(std::chrono::milliseconds(r.i64()));
      }
      if (!try_answer(w)) {
        c.blocked = true;
        waiters_.push_back(std::move(w));
      }
      return;
    }
  }
  throw Error("TCPStore: unknown command");
}

bool TCPStoreServer::try_answer(const Waiter& w) {
  for (const auto& k : w.keys)
    if (!data_.count(k)) return false;
  if (w.command == Command::WaitAtLeast) {
    int64_t v = 0;
    try {
      v = parse_int(w.keys[0]);
    } catch (const ValueError&) {
      return false;
    }
    if (v < w.target) return false;
  }
  auto it = connections_.find(w.fd);
  if (it == connections_.end()) return true;  // the client left; drop the waiter
  wire::Writer out;
  out.u8(static_cast<uint8_t>(Status::Ok));
  if (w.command == Command::Get) out.bytes(data_[w.keys[0]]);
  reply(it->second, out);
  it->second.blocked = false;
  return true;
}

void TCPStoreServer::wake_waiters(const std::string& key) {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    bool watches = std::find(it->keys.begin(), it->keys.end(), key) != it->keys.end();
    if (watches && try_answer(*it))
      it = waiters_.erase(it);
    else
      ++it;
  }
}

void TCPStoreServer::expire_waiters() {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (!it->deadline.expired()) {
      ++it;
      continue;
    }
    auto c = connections_.find(it->fd);
    if (c != connections_.end()) {
      reply(c->second, wire::Writer().u8(static_cast<uint8_t>(Status::Timeout)));
      c->second.blocked = false;
    }
    it = waiters_.erase(it);
  }
}

int TCPStoreServer::next_deadline_ms() const {
  // Requests held behind a wait that has been answered since: handle them now.
  for (const auto& [fd, c] : connections_)
    if (!c.blocked && !c.closing && c.in.size() >= 4 && c.in.size() - 4 >= wire::read_length(c.in.data()))
      return 0;
  int ms = -1;
  for (const auto& w : waiters_) {
    int left = w.deadline.poll_ms();
    if (left >= 0 && (ms < 0 || left < ms)) ms = left;
  }
  return ms;
}

}  // namespace ember::distributed
