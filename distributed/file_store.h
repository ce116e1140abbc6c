// A Store in one file that every process can open (init_method="file://"):
// an append-only log of set/delete records, each operation under flock(2),
// so processes on one machine (or a shared file system with working locks)
// rendezvous without a server. The last user to close it removes the file.
#pragma once
#include <map>
#include <mutex>
#include <string>

#include <ember/distributed/store.h>

namespace ember::distributed {

class FileStore : public Store {
 public:
  explicit FileStore(std::string path);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  const std::string& path() const { return path_; }

 private:
  class Locked;  // holds the file's lock and brings the map up to date
  void append(bool is_delete, const std::string& key, const Bytes& value);
  int64_t add_locked(const std::string& key, int64_t delta);

  std::string path_;
  int fd_ = -1;
  std::mutex mu_;                      // threads of this process share fd_
  std::map<std::string, Bytes> data_;  // the log replayed up to offset_
  int64_t offset_ = 0;
};

}  // namespace ember::distributed
