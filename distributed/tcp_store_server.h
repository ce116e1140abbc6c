// The TCPStore master's server: one background thread multiplexes every
// client connection with poll(), keeps the key-value map, and answers waits
// when their keys arrive or their timeout passes (no busy polling).
#pragma once
#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ember/distributed/tcp_store_socket.h>
#include <ember/distributed/tcp_store_wire.h>

namespace ember::distributed {

class TCPStoreServer {
 public:
  // Listens on every interface at `port` (0 picks a free one; `host` only
  // names the address in errors) and starts the server thread.
  TCPStoreServer(const std::string& host, uint16_t port);
  // Stops the thread; connected clients see the connection close.
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  using Bytes = std::vector<uint8_t>;

  struct Connection {
    net::Socket socket;
    Bytes in;           // received bytes not yet parsed into messages
    Bytes out;          // replies not yet sent
    size_t out_sent = 0;
    bool blocked = false;  // a wait of this connection is pending: hold its next requests
    bool closing = false;
  };

  // A request that waits for keys: a Wait, a Get, or a WaitAtLeast on a counter.
  struct Waiter {
    int fd;
    wire::Command command;
    std::vector<std::string> keys;
    int64_t target = 0;  // WaitAtLeast only
    net::Deadline deadline;
  };

  void run();
  void accept_clients();
  void read_from(Connection& c);
  void write_to(Connection& c);
  void handle_messages(Connection& c);
  void handle(Connection& c, wire::Reader& r);
  // Replies to c (queued; sent as the socket allows).
  void reply(Connection& c, const wire::Writer& w);
  // Answers the waiter when its keys are there; false when it must keep waiting.
  bool try_answer(const Waiter& w);
  void wake_waiters(const std::string& key);
  void expire_waiters();
  // How long poll() may sleep: until the nearest wait deadline, 0 when work is pending.
  int next_deadline_ms() const;
  int64_t parse_int(const std::string& key) const;

  net::Socket listener_;
  int wake_read_ = -1, wake_write_ = -1;  // a pipe that stops poll() on shutdown
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;

  std::unordered_map<std::string, Bytes> data_;
  std::map<int, Connection> connections_;
  std::list<Waiter> waiters_;
};

}  // namespace ember::distributed
