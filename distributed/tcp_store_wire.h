// The TCPStore's wire format. Every message is a 4-byte little-endian length
// followed by that many payload bytes. A request payload is a command byte
// then its fields; a reply payload is a status byte then its fields. Fields:
// u8, i64 (8 bytes little-endian), and byte strings (u32 length + bytes).
//
//   request                              reply (status Ok unless noted)
//   Set      key value                   -
//   Get      key timeout_ms              value            | Timeout
//   Add      key delta                   i64 sum          | Failed msg
//   CompareSet key expected desired      value now stored (expected when absent)
//   Check    n key...                    u8 all present
//   Wait     timeout_ms n key...         -                | Timeout
//   WaitAtLeast key target timeout_ms    -                | Timeout
//   Delete   key                         u8 existed
//   NumKeys                              i64
//
// timeout_ms 0 waits forever. The server answers waits when the keys arrive
// or the timeout passes, so a client never polls.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ember/core/error.h>

namespace ember::distributed::wire {

enum class Command : uint8_t { Set = 1, Get, Add, CompareSet, Check, Wait, WaitAtLeast, Delete, NumKeys };
enum class Status : uint8_t { Ok = 0, Timeout = 1, Failed = 2 };

// Rejects garbage lengths (a stray HTTP client, a corrupt stream) early.
inline constexpr uint32_t kMaxMessageBytes = 1u << 30;

// Builds one payload (without the length prefix).
class Writer {
 public:
  Writer& u8(uint8_t v) {
    buf_.push_back(v);
    return *this;
  }
  Writer& i64(int64_t v) {
    uint64_t u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(u >> (8 * i)));
    return *this;
  }
  Writer& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Writer& bytes(const uint8_t* p, size_t n) {
    EMBER_CHECK(n < kMaxMessageBytes, ValueError, "TCPStore: value of ", n, " bytes is too large");
    u32(static_cast<uint32_t>(n));
    buf_.insert(buf_.end(), p, p + n);
    return *this;
  }
  Writer& bytes(const std::vector<uint8_t>& v) { return bytes(v.data(), v.size()); }
  Writer& str(const std::string& s) { return bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  // The framed message: length prefix then payload.
  std::vector<uint8_t> framed() const {
    std::vector<uint8_t> out;
    out.reserve(buf_.size() + 4);
    uint32_t n = static_cast<uint32_t>(buf_.size());
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
    out.insert(out.end(), buf_.begin(), buf_.end());
    return out;
  }

 private:
  std::vector<uint8_t> buf_;
};

// Reads fields back from one payload; a short payload throws ember::Error.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  uint8_t u8() {
    need(1);
    return *p_++;
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(*p_++) << (8 * i);
    return v;
  }
  int64_t i64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(*p_++) << (8 * i);
    return static_cast<int64_t>(v);
  }
  std::vector<uint8_t> bytes() {
    uint32_t n = u32();
    need(n);
    std::vector<uint8_t> v(p_, p_ + n);
    p_ += n;
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  void need(size_t n) const {
    EMBER_CHECK(static_cast<size_t>(end_ - p_) >= n, Error, "TCPStore: malformed message");
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

// Little-endian u32 at p (the length prefix).
inline uint32_t read_length(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace ember::distributed::wire
