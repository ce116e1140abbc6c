#include <ember/autograd/saved_hooks.h>

#include <vector>

#include <ember/autograd/packed_save.h>
#include <ember/core/error.h>

namespace ember::autograd {

std::atomic<int64_t> g_saved_tensor_hook_entries{0};

namespace {
struct HooksState {
  std::vector<std::shared_ptr<const SavedTensorHooks>> stack;
  int64_t real_entries = 0;  // entries that are not null
  std::optional<std::string> disabled_message;
  // A thread that ends with hooks pushed no longer has them in force.
  ~HooksState() { g_saved_tensor_hook_entries.fetch_sub(real_entries, std::memory_order_relaxed); }
};

HooksState& state() {
  thread_local HooksState s;
  return s;
}

// The top of the stack, kept apart from it so the check ops make per node is
// one read of a trivially initialized thread-local.
thread_local const std::shared_ptr<const SavedTensorHooks>* t_current = nullptr;

const std::shared_ptr<const SavedTensorHooks> kNone;

void refresh_current() {
  auto& s = state();
  t_current = s.stack.empty() || !s.stack.back() ? nullptr : &s.stack.back();
}
}  // namespace

void push_saved_tensor_hooks(std::shared_ptr<const SavedTensorHooks> hooks) {
  auto& s = state();
  if (hooks) {
    if (s.disabled_message) throw Error(*s.disabled_message);
    EMBER_CHECK(hooks->pack && hooks->unpack, ValueError,
                "saved_tensors_hooks: both a pack hook and an unpack hook are needed");
    ++s.real_entries;
    g_saved_tensor_hook_entries.fetch_add(1, std::memory_order_relaxed);
  }
  s.stack.push_back(std::move(hooks));
  refresh_current();
}

void pop_saved_tensor_hooks() {
  auto& s = state();
  EMBER_CHECK(!s.stack.empty(), Error, "saved_tensors_hooks: pop without a matching push");
  if (s.stack.back()) {
    --s.real_entries;
    g_saved_tensor_hook_entries.fetch_sub(1, std::memory_order_relaxed);
  }
  s.stack.pop_back();
  refresh_current();
}

const std::shared_ptr<const SavedTensorHooks>& current_saved_tensor_hooks() {
  return t_current ? *t_current : kNone;
}

void disable_saved_tensor_hooks(const std::string& message) {
  auto& s = state();
  s.disabled_message = message;
  if (s.real_entries > 0) throw Error(message);
}

void enable_saved_tensor_hooks() { state().disabled_message.reset(); }

std::optional<std::string> saved_tensor_hooks_disabled_message() { return state().disabled_message; }

}  // namespace ember::autograd
