// ProcessGroup over gloo (CPU tensors). Placeholder until the gloo backend lands.
#include <ember/core/error.h>
#include <ember/distributed/process_group.h>

namespace ember::distributed {

std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store>, int, int, ProcessGroupOptions) {
  throw NotImplementedError("init_process_group: the gloo backend is not implemented yet");
}

}  // namespace ember::distributed
