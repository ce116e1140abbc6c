// TCPStore from C++: a master and clients in threads of one process, on
// loopback with a port the kernel picks. Every blocking call has a short
// timeout so a bug fails the test instead of hanging it.
#include <ember/distributed/tcp_store.h>
#include <ember/distributed/tcp_store_wire.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "util.h"

using namespace ember;
using namespace ember::distributed;
using namespace std::chrono_literals;
using test::require_throws;

namespace {

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

std::unique_ptr<TCPStore> master(Milliseconds timeout = 5000ms) {
  return std::make_unique<TCPStore>("127.0.0.1", 0, std::nullopt, true, timeout);
}

std::unique_ptr<TCPStore> client(uint16_t port, Milliseconds timeout = 5000ms) {
  return std::make_unique<TCPStore>("127.0.0.1", port, std::nullopt, false, timeout);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("TCPStore: set, get, add, compare_set, check, delete and num_keys", "[store]") {
  auto m = master();
  REQUIRE(m->port() != 0);
  auto c = client(m->port());
  c->set("a", bytes("hello"));
  REQUIRE(text(m->get("a")) == "hello");
  c->set("empty", Bytes{});
  REQUIRE(m->get("empty").empty());
  REQUIRE(m->add("n", 3) == 3);
  REQUIRE(c->add("n", -5) == -2);
  REQUIRE(text(c->get("n")) == "-2");
  REQUIRE(c->check({"a", "n"}));
  REQUIRE(!c->check({"a", "missing"}));
  // compare_set: swaps on a match, keeps the value otherwise, creates only from "".
  REQUIRE(text(c->compare_set("a", bytes("hello"), bytes("world"))) == "world");
  REQUIRE(text(c->compare_set("a", bytes("nope"), bytes("x"))) == "world");
  REQUIRE(text(c->compare_set("new", Bytes{}, bytes("v"))) == "v");
  REQUIRE(text(c->compare_set("absent", bytes("e"), bytes("v"))) == "e");
  REQUIRE(!c->check({"absent"}));
  // "init/" (the join counter) + a, empty, n, new.
  REQUIRE(m->num_keys() == 5);
  REQUIRE(c->delete_key("a"));
  REQUIRE(!c->delete_key("a"));
  REQUIRE(m->num_keys() == 4);
  require_throws<Error>([&] { c->add("new", 1); }, "not an integer");
  REQUIRE(c->add("n", 1) == -1);  // the connection still works after a failed request
}

TEST_CASE("TCPStore: binary values of any size round-trip", "[store]") {
  auto m = master();
  Bytes big(3 * 1024 * 1024 + 7);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31 + 7);
  big[0] = 0;
  m->set("big", big);
  auto c = client(m->port());
  REQUIRE(c->get("big") == big);
}

TEST_CASE("TCPStore: a get blocks until another client sets the key", "[store]") {
  auto m = master();
  auto c = client(m->port());
  std::thread setter([&] {
    std::this_thread::sleep_for(100ms);
    c->set("late", bytes("here"));
  });
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(text(m->get("late")) == "here");
  setter.join();
  REQUIRE(seconds_since(t0) >= 0.09);
}

TEST_CASE("TCPStore: wait and get time out with the key's name", "[store]") {
  auto m = master(300ms);
  auto t0 = std::chrono::steady_clock::now();
  require_throws<Error>([&] { m->get("never"); }, "timed out after 300ms waiting for key 'never'");
  REQUIRE(seconds_since(t0) < 2.0);
  require_throws<Error>([&] { m->wait({"x", "y"}, 200ms); }, "'x', 'y'");
  // The connection is still in step after a timeout.
  m->set("x", bytes("1"));
  m->set("y", bytes("2"));
  m->wait({"x", "y"}, 200ms);
  REQUIRE(text(m->get("y")) == "2");
}

TEST_CASE("TCPStore: many clients in threads count together", "[store]") {
  auto m = master();
  constexpr int kClients = 8, kAdds = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      try {
        auto c = client(m->port());
        for (int k = 0; k < kAdds; ++k) c->add("count", 1);
        c->set("done/" + std::to_string(i), bytes("1"));
        std::vector<std::string> all;
        for (int j = 0; j < kClients; ++j) all.push_back("done/" + std::to_string(j));
        c->wait(all, 5000ms);
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(failures == 0);
  REQUIRE(m->add("count", 0) == kClients * kAdds);
}

TEST_CASE("TCPStore: one client shared by threads", "[store]") {
  auto m = master();
  auto c = client(m->port());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 100; ++k) c->add("shared", 1);
    });
  for (auto& t : threads) t.join();
  REQUIRE(m->add("shared", 0) == 400);
}

TEST_CASE("TCPStore: the master waits for world_size workers", "[store]") {
  // Find a free port, then start the clients before the master listens.
  uint16_t port;
  { port = master()->port(); }
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 2; ++i)
    workers.emplace_back([&] {
      try {
        TCPStore w("127.0.0.1", port, 3, false, 5000ms);
        w.wait({"go"});
      } catch (...) {
        ++failures;
      }
    });
  std::this_thread::sleep_for(50ms);
  TCPStore m("127.0.0.1", port, 3, true, 5000ms);
  REQUIRE(m.add(TCPStore::kJoinedKey, 0) == 3);
  m.set("go", bytes("1"));
  for (auto& t : workers) t.join();
  REQUIRE(failures == 0);

  auto t0 = std::chrono::steady_clock::now();
  require_throws<Error>([&] { TCPStore("127.0.0.1", 0, 2, true, 300ms); }, "waiting for 2 workers");
  REQUIRE(seconds_since(t0) < 2.0);
}

TEST_CASE("TCPStore: a taken port and a missing master are reported with the address", "[store]") {
  auto m = master();
  require_throws<Error>([&] { TCPStore("127.0.0.1", m->port(), std::nullopt, true, 1000ms); },
                        "address 127.0.0.1:" + std::to_string(m->port()) + " is already in use");
  uint16_t free_port = master()->port();
  auto t0 = std::chrono::steady_clock::now();
  require_throws<Error>([&] { client(free_port, 300ms); },
                        "could not connect to the master at 127.0.0.1:" + std::to_string(free_port) + " within 300ms");
  REQUIRE(seconds_since(t0) < 2.0);
}

TEST_CASE("TCPStore: a get blocked on a master that goes away raises", "[store]") {
  auto m = master();
  auto c = client(m->port(), 10000ms);
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    m.reset();
  });
  auto t0 = std::chrono::steady_clock::now();
  require_throws<Error>([&] { c->get("never"); }, "lost the connection to the master");
  killer.join();
  REQUIRE(seconds_since(t0) < 3.0);
}

TEST_CASE("TCPStore: a stranger's bytes do not stop the server", "[store]") {
  auto m = master();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(m->port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const char junk[] = "GET / HTTP/1.1\r\n\r\n";
  REQUIRE(::send(fd, junk, sizeof junk, 0) > 0);
  ::close(fd);
  m->set("still", bytes("alive"));
  REQUIRE(text(client(m->port())->get("still")) == "alive");
}

TEST_CASE("PrefixStore over a TCPStore keeps namespaces apart", "[store]") {
  std::shared_ptr<Store> m = master();
  PrefixStore a("a", m), b("b", m);
  a.set("k", bytes("1"));
  b.set("k", bytes("2"));
  REQUIRE(text(a.get("k")) == "1");
  REQUIRE(text(m->get("b/k")) == "2");
  REQUIRE(a.add("n", 2) == 2);
  REQUIRE(!b.check({"n"}));
}

TEST_CASE("TCPStore server: requests pipelined behind a wait are answered after it", "[store]") {
  auto m = master();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(m->port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  wire::Writer wait, count;
  wait.u8(static_cast<uint8_t>(wire::Command::Wait)).i64(5000).u32(1).str("k");
  count.u8(static_cast<uint8_t>(wire::Command::NumKeys));
  Bytes both = wait.framed();
  Bytes second = count.framed();
  both.insert(both.end(), second.begin(), second.end());
  REQUIRE(::send(fd, both.data(), both.size(), 0) == static_cast<ssize_t>(both.size()));
  std::this_thread::sleep_for(50ms);
  m->set("k", bytes("v"));
  // Wait's reply: length 1, status Ok. NumKeys's: length 9, status Ok, i64 2 ("init/" and "k").
  uint8_t reply[5 + 13];
  net::recv_exact(fd, reply, sizeof reply, net::Deadline::after(2000ms));
  REQUIRE(wire::read_length(reply) == 1);
  REQUIRE(reply[4] == static_cast<uint8_t>(wire::Status::Ok));
  REQUIRE(wire::read_length(reply + 5) == 9);
  wire::Reader r(reply + 9, 9);
  REQUIRE(r.u8() == static_cast<uint8_t>(wire::Status::Ok));
  REQUIRE(r.i64() == 2);
  ::close(fd);
}
