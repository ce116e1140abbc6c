// einsum: Einstein summation over any number of operands, composed of views,
// sums and matmul (so it runs wherever those run and is differentiable).
#pragma once
#include <string>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

// PyTorch's torch.einsum: subscripts [a-zA-Z], an optional "->output"
// (implicit output: '...' first, then the labels used once, sorted), '...'
// for broadcast leading dims, a label repeated on one operand takes its
// diagonal. Operands are contracted left to right, each pair as one batched
// matrix product. Errors (RuntimeError) name the equation and the shapes.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace ember
