// Backward formulas of the conv family, written with the conv primitives
// themselves (conv, its transpose, its weight gradient are each other's
// adjoints), so double backward works.
#pragma once
#include <ember/autograd/node.h>
#include <ember/core/cpu/conv.h>

namespace ember::autograd::functions {

Vjp conv_backward(const cpu::ConvGeom& g);            // inputs x, w, bias; saved: x, w
Vjp conv_transpose_backward(const cpu::ConvGeom& g);  // inputs x, w, bias; saved: x, w
Vjp conv_weight_backward(const cpu::ConvGeom& g);     // inputs x, gy; saved: x, gy

}  // namespace ember::autograd::functions
