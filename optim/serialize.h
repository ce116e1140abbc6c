// Optimizer checkpoints: an optimizer's state_dict() saved as one safetensors
// file in the layout Python's ember.save gives the same dict
// ({"state": {0: {"step": ..., "exp_avg": ...}}, "param_groups": [{"lr": ...,
// "params": [0, 1]}]}), so C++ runs resume from it and Python's ember.load reads it.
#pragma once
#include <string>

#include <ember/nn/serialize.h>
#include <ember/optim/optimizer.h>

namespace ember {

// Atomic, as ember::save of tensors.
void save(const optim::OptimizerState& state, const std::string& path);
// Reads a file written by either of the saves here or by Python's
// ember.save(optimizer.state_dict()); a file of another layout -> ember::Error naming the path.
void load(optim::OptimizerState& state, const std::string& path);

void save(const optim::Optimizer& optimizer, const std::string& path);
void load(optim::Optimizer& optimizer, const std::string& path);

}  // namespace ember
