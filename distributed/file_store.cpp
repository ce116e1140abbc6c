#include <ember/distributed/file_store.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <ember/core/error.h>

namespace ember::distributed {

namespace {

// Counts the processes (and threads) using the file; the last one removes it.
const char* const kUsersKey = "__ember_file_store_users__";

void write_all(int fd, const void* p, size_t n, const std::string& path) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    EMBER_CHECK(w > 0, Error, "FileStore: cannot write to ", path, ": ", std::strerror(errno));
    c += w;
    n -= static_cast<size_t>(w);
  }
}

Bytes to_bytes(int64_t v) {
  const std::string s = std::to_string(v);
  return Bytes(s.begin(), s.end());
}

}  // namespace

// RAII: takes the process lock and the file lock, then replays what other
// processes appended since the last look.
class FileStore::Locked {
 public:
  explicit Locked(FileStore& s) : s_(s), guard_(s.mu_) {
    while (::flock(s_.fd_, LOCK_EX) != 0) {
      EMBER_CHECK(errno == EINTR, Error, "FileStore: cannot lock ", s_.path_, ": ", std::strerror(errno));
    }
    replay();
  }
  ~Locked() { ::flock(s_.fd_, LOCK_UN); }

 private:
  void replay() {
    const off_t end = ::lseek(s_.fd_, 0, SEEK_END);
    EMBER_CHECK(end >= 0, Error, "FileStore: cannot seek in ", s_.path_);
    if (end <= s_.offset_) return;
    std::string buf(static_cast<size_t>(end - s_.offset_), '\0');
    EMBER_CHECK(::pread(s_.fd_, buf.data(), buf.size(), s_.offset_) == static_cast<ssize_t>(buf.size()), Error,
                "FileStore: cannot read ", s_.path_);
    size_t pos = 0;
    auto read_u32 = [&]() {
      uint32_t v;
      std::memcpy(&v, buf.data() + pos, 4);
      pos += 4;
      return v;
    };
    // Record: op (1 byte: 0 set, 1 delete), key length, key, value length, value.
    while (pos + 9 <= buf.size()) {
      const char op = buf[pos++];
      const uint32_t klen = read_u32();
      std::string key = buf.substr(pos, klen);
      pos += klen;
      const uint32_t vlen = read_u32();
      Bytes value(buf.begin() + pos, buf.begin() + pos + vlen);
      pos += vlen;
      if (op == 1)
        s_.data_.erase(key);
      else
        s_.data_[key] = std::move(value);
    }
    s_.offset_ = end;
  }
  FileStore& s_;
  std::lock_guard<std::mutex> guard_;
};

FileStore::FileStore(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  EMBER_CHECK(fd_ >= 0, Error, "FileStore: cannot open ", path_, ": ", std::strerror(errno));
  Locked lock(*this);
  add_locked(kUsersKey, 1);
}

FileStore::~FileStore() {
  try {
    Locked lock(*this);
    if (add_locked(kUsersKey, -1) <= 0) ::unlink(path_.c_str());
  } catch (...) {
  }
  ::close(fd_);
}

void FileStore::append(bool is_delete, const std::string& key, const Bytes& value) {
  std::string rec(1, is_delete ? '\1' : '\0');
  const uint32_t klen = static_cast<uint32_t>(key.size()), vlen = static_cast<uint32_t>(value.size());
  rec.append(reinterpret_cast<const char*>(&klen), 4);
  rec += key;
  rec.append(reinterpret_cast<const char*>(&vlen), 4);
  rec.append(value.begin(), value.end());
  EMBER_CHECK(::lseek(fd_, 0, SEEK_END) >= 0, Error, "FileStore: cannot seek in ", path_);
  write_all(fd_, rec.data(), rec.size(), path_);
  offset_ += static_cast<int64_t>(rec.size());
  if (is_delete)
    data_.erase(key);
  else
    data_[key] = value;
}

int64_t FileStore::add_locked(const std::string& key, int64_t delta) {
  auto it = data_.find(key);
  int64_t v = delta;
  if (it != data_.end() && !it->second.empty()) {
    try {
      v += std::stoll(std::string(it->second.begin(), it->second.end()));
    } catch (const std::exception&) {
      throw ValueError(str("FileStore.add: the value at '", key, "' is not an integer"));
    }
  }
  append(false, key, to_bytes(v));
  return v;
}

void FileStore::set(const std::string& key, const Bytes& value) {
  Locked lock(*this);
  append(false, key, value);
}

Bytes FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  Locked lock(*this);
  return data_.at(key);
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  Locked lock(*this);
  return add_locked(key, delta);
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Locked lock(*this);
  auto it = data_.find(key);
  if ((it == data_.end() && expected.empty()) || (it != data_.end() && it->second == expected)) {
    append(false, key, desired);
    return desired;
  }
  return it == data_.end() ? expected : it->second;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  Locked lock(*this);
  for (const auto& k : keys)
    if (!data_.count(k)) return false;
  return true;
}

void FileStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (check(keys)) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string names;
      for (const auto& k : keys) names += (names.empty() ? "'" : ", '") + k + "'";
      throw Error(str("FileStore: timed out after ", timeout.count(), " ms waiting for ", names, " in ", path_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool FileStore::delete_key(const std::string& key) {
  Locked lock(*this);
  if (!data_.count(key)) return false;
  append(true, key, {});
  return true;
}

int64_t FileStore::num_keys() {
  Locked lock(*this);
  return static_cast<int64_t>(data_.size()) - static_cast<int64_t>(data_.count(kUsersKey));
}

}  // namespace ember::distributed
