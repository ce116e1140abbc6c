#include <ember/distributed/store.h>

namespace ember::distributed {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> inner)
    : prefix_(std::move(prefix)), inner_(std::move(inner)) {
  timeout_ = inner_->timeout();
}

void PrefixStore::set(const std::string& k, const Bytes& v) { inner_->set(key(k), v); }
Bytes PrefixStore::get(const std::string& k) { return inner_->get(key(k)); }
int64_t PrefixStore::add(const std::string& k, int64_t d) { return inner_->add(key(k), d); }
Bytes PrefixStore::compare_set(const std::string& k, const Bytes& e, const Bytes& d) {
  return inner_->compare_set(key(k), e, d);
}
bool PrefixStore::check(const std::vector<std::string>& keys) {
  std::vector<std::string> full;
  for (const auto& k : keys) full.push_back(key(k));
  return inner_->check(full);
}
void PrefixStore::wait(const std::vector<std::string>& keys, Milliseconds t) {
  std::vector<std::string> full;
  for (const auto& k : keys) full.push_back(key(k));
  inner_->wait(full, t);
}
bool PrefixStore::delete_key(const std::string& k) { return inner_->delete_key(key(k)); }
int64_t PrefixStore::num_keys() { return inner_->num_keys(); }

}  // namespace ember::distributed
