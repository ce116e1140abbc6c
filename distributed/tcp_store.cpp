#include <ember/distributed/tcp_store.h>

#include <ember/core/error.h>
#include <ember/distributed/tcp_store_server.h>
#include <ember/distributed/tcp_store_wire.h>

namespace ember::distributed {

using wire::Command;
using wire::Status;

namespace {

// How much longer than a wait's own timeout the client gives the server to
// answer before it declares the master unresponsive (a hung, not dead, host).
constexpr Milliseconds kReplyGrace{2000};

// The reply deadline of a wait the server holds up to `t` (0: forever).
Milliseconds wait_reply_within(Milliseconds t) { return t.count() > 0 ? t + kReplyGrace : t; }

wire::Writer command(Command c) {
  wire::Writer w;
  w.u8(static_cast<uint8_t>(c));
  return w;
}

std::string quoted_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", '" : "'") + keys[i] + "'";
  return s;
}

}  // namespace

TCPStore::TCPStore(std::string host, uint16_t port, std::optional<int64_t> world_size, bool is_master,
                   Milliseconds timeout, bool wait_for_workers)
    : host_(std::move(host)), port_(port), world_size_(world_size) {
  EMBER_CHECK(!world_size || *world_size >= 1, ValueError, "TCPStore: world_size must be positive, got ",
              *world_size);
  EMBER_CHECK(timeout.count() >= 0, ValueError, "TCPStore: timeout must not be negative");
  timeout_ = timeout;
  if (is_master) {
    server_ = std::make_unique<TCPStoreServer>(host_, port);
    port_ = server_->port();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connect_locked();
  }
  add(kJoinedKey, 1);
  if (!is_master || !world_size || !wait_for_workers) return;
  wire::Writer w = command(Command::WaitAtLeast);
  w.str(kJoinedKey).i64(*world_size).i64(timeout_.count());
  Bytes r = request(w.framed(), "waiting for workers", wait_reply_within(timeout_));
  if (static_cast<Status>(r[0]) == Status::Timeout) {
    Bytes joined = get(kJoinedKey);
    throw Error(str("TCPStore: timed out after ", timeout_.count(), "ms waiting for ", *world_size,
                    " workers to join at ", address(), " (", std::string(joined.begin(), joined.end()),
                    " joined)"));
  }
}

TCPStore::~TCPStore() {
  socket_.close();
  server_.reset();  // stops the server thread (master only)
}

std::string TCPStore::address() const { return str(host_, ":", port_); }

void TCPStore::connect_locked() {
  try {
    socket_ = net::connect_with_retry(host_, port_, net::Deadline::after(timeout_));
  } catch (const net::IoError& e) {
    throw Error(str("TCPStore: could not connect to the master at ", address(), " within ", timeout_.count(),
                    "ms (", e.what(), ")"));
  }
}

Bytes TCPStore::request(const std::vector<uint8_t>& framed, const char* what, Milliseconds reply_within) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A connection broken by an earlier failure is reopened: the master may be back.
  if (!socket_.valid()) connect_locked();
  try {
    net::send_all(socket_.fd(), framed.data(), framed.size(), net::Deadline::after(timeout_));
    const net::Deadline deadline = net::Deadline::after(reply_within);
    uint8_t len[4];
    net::recv_exact(socket_.fd(), len, 4, deadline);
    const uint32_t n = wire::read_length(len);
    EMBER_CHECK(n >= 1 && n <= wire::kMaxMessageBytes, Error, "TCPStore: ", what,
                ": malformed reply from the master at ", address());
    Bytes reply(n);
    net::recv_exact(socket_.fd(), reply.data(), n, deadline);
    return reply;
  } catch (const net::IoError& e) {
    socket_.close();  // the stream is out of step now
    if (e.timed_out)
      throw Error(str("TCPStore: ", what, ": no reply from the master at ", address(), " within ",
                      reply_within.count(), "ms"));
    throw Error(str("TCPStore: ", what, ": lost the connection to the master at ", address(), " (", e.what(),
                    ")"));
  } catch (const Error&) {
    socket_.close();
    throw;
  }
}

namespace {

// Raises the server's message when the request failed.
wire::Reader checked(const Bytes& reply) {
  wire::Reader r(reply.data(), reply.size());
  if (static_cast<Status>(r.u8()) == Status::Failed) throw Error(r.str());
  return r;
}

}  // namespace

void TCPStore::set(const std::string& key, const Bytes& value) {
  wire::Writer w = command(Command::Set);
  w.str(key).bytes(value);
  checked(request(w.framed(), "set", timeout_));
}

Bytes TCPStore::get(const std::string& key) {
  wire::Writer w = command(Command::Get);
  w.str(key).i64(timeout_.count());
  Bytes reply = request(w.framed(), "get", wait_reply_within(timeout_));
  EMBER_CHECK(static_cast<Status>(reply[0]) != Status::Timeout, Error, "TCPStore: get: timed out after ",
              timeout_.count(), "ms waiting for key '", key, "'");
  return checked(reply).bytes();
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  wire::Writer w = command(Command::Add);
  w.str(key).i64(delta);
  return checked(request(w.framed(), "add", timeout_)).i64();
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  wire::Writer w = command(Command::CompareSet);
  w.str(key).bytes(expected).bytes(desired);
  return checked(request(w.framed(), "compare_set", timeout_)).bytes();
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  wire::Writer w = command(Command::Check);
  w.u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.str(k);
  return checked(request(w.framed(), "check", timeout_)).u8() != 0;
}

void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  EMBER_CHECK(timeout.count() >= 0, ValueError, "TCPStore: wait: timeout must not be negative");
  wire::Writer w = command(Command::Wait);
  w.i64(timeout.count()).u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.str(k);
  Bytes reply = request(w.framed(), "wait", wait_reply_within(timeout));
  EMBER_CHECK(static_cast<Status>(reply[0]) != Status::Timeout, Error, "TCPStore: wait: timed out after ",
              timeout.count(), "ms waiting for keys ", quoted_keys(keys));
  checked(reply);
}

bool TCPStore::delete_key(const std::string& key) {
  wire::Writer w = command(Command::Delete);
  w.str(key);
  return checked(request(w.framed(), "delete_key", timeout_)).u8() != 0;
}

int64_t TCPStore::num_keys() {
  return checked(request(command(Command::NumKeys).framed(), "num_keys", timeout_)).i64();
}

}  // namespace ember::distributed
