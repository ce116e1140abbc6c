// ember: the umbrella header of the C++ API.
#pragma once

#include <ember/autograd/engine.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/generator.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/conv.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/pool.h>
#include <ember/core/ops/random.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/softmax.h>
#include <ember/core/ops/unary.h>
#include <ember/core/scalar.h>
#include <ember/core/tensor.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/cuda_api.h>
