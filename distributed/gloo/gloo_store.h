// ember's Store seen as gloo's rendezvous::Store, so gloo's full-mesh connect
// publishes and looks up each rank's address in the group's own namespace.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include <ember/distributed/store.h>

namespace ember::distributed {

class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const Bytes v = store_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> store_;
};

}  // namespace ember::distributed
