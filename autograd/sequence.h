// The creation counter of graph nodes (Node::sequence_nr). Nodes numbered at
// or after a reading were made after it: callers use this to tell the part of
// a graph that one computation recorded (activation checkpointing).
#pragma once
#include <cstdint>

namespace ember::autograd {

// The sequence number the next recorded node will get.
uint64_t next_sequence_nr();

}  // namespace ember::autograd
