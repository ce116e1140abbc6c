// An in-memory Store shared by threads of one process: lets the C++ tests run
// several ranks of a process group as threads, without sockets for the
// rendezvous.
#pragma once
#include <condition_variable>
#include <map>
#include <mutex>

#include <ember/core/error.h>
#include <ember/distributed/store.h>

namespace ember::test {

class HashStore : public distributed::Store {
 public:
  void set(const std::string& key, const distributed::Bytes& value) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      data_[key] = value;
    }
    cv_.notify_all();
  }
  distributed::Bytes get(const std::string& key) override {
    wait({key}, timeout_);
    std::lock_guard<std::mutex> lock(mu_);
    return data_.at(key);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    int64_t v;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& bytes = data_[key];
      v = (bytes.empty() ? 0 : std::stoll(std::string(bytes.begin(), bytes.end()))) + delta;
      const std::string s = std::to_string(v);
      bytes.assign(s.begin(), s.end());
    }
    cv_.notify_all();
    return v;
  }
  distributed::Bytes compare_set(const std::string& key, const distributed::Bytes& expected,
                                 const distributed::Bytes& desired) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = data_.find(key);
    if ((it == data_.end() && expected.empty()) || (it != data_.end() && it->second == expected)) {
      data_[key] = desired;
      cv_.notify_all();
      return desired;
    }
    return it == data_.end() ? expected : it->second;
  }
  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    return has_all(keys);
  }
  void wait(const std::vector<std::string>& keys, distributed::Milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return has_all(keys); }))
      throw Error(str("HashStore: timed out after ", timeout.count(), " ms waiting for '", keys.at(0), "'"));
  }
  bool delete_key(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    return data_.erase(key) > 0;
  }
  int64_t num_keys() override {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(data_.size());
  }

 private:
  bool has_all(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!data_.count(k)) return false;
    return true;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, distributed::Bytes> data_;
};

}  // namespace ember::test
