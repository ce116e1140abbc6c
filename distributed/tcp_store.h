// TCPStore: the store processes rendezvous through over TCP, as PyTorch's.
// The master (rank 0) runs the server on a background thread and is also a
// client of it; every other process connects to host:port, retrying until the
// timeout because the master may start later. Waits are answered by the
// server when their keys arrive. A client may be shared between threads.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <ember/distributed/store.h>
#include <ember/distributed/tcp_store_socket.h>

namespace ember::distributed {

class TCPStoreServer;

// PyTorch's TCPStore default timeout: 300 s.
inline constexpr Milliseconds kDefaultStoreTimeout{300 * 1000};

class TCPStore : public Store {
 public:
  // is_master: listen on `port` (0 picks a free one, see port()); raises
  // "TCPStore: address host:port is already in use" when it is taken.
  // world_size: when given with wait_for_workers, the master's constructor
  // returns once world_size clients (itself included) have joined.
  // Raises ember::Error naming host:port when no master answers in time.
  TCPStore(std::string host, uint16_t port, std::optional<int64_t> world_size = std::nullopt,
           bool is_master = false, Milliseconds timeout = kDefaultStoreTimeout, bool wait_for_workers = true);
  ~TCPStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  using Store::wait;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;

  const std::string& host() const { return host_; }
  // The port the master listens on (the chosen one when constructed with 0).
  uint16_t port() const { return port_; }
  bool is_master() const { return server_ != nullptr; }
  std::optional<int64_t> world_size() const { return world_size_; }

  // The counter every client increments once when it joins.
  static constexpr const char* kJoinedKey = "init/";

 private:
  // Sends one request and returns the reply payload (status byte first);
  // raises when no reply came within `reply_within` (0: no limit).
  Bytes request(const std::vector<uint8_t>& framed, const char* what, Milliseconds reply_within);
  void connect_locked();
  std::string address() const;

  std::string host_;
  uint16_t port_;
  std::optional<int64_t> world_size_;
  std::unique_ptr<TCPStoreServer> server_;
  std::mutex mutex_;
  net::Socket socket_;
};

}  // namespace ember::distributed
