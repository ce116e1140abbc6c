"""Folding an eval-mode BatchNorm into the convolution or linear layer before it
(torch.nn.utils.fusion): y = bn(conv(x)) becomes one conv with scaled weights
and a shifted bias, for inference."""
import copy

import ember
from ember.nn.parameter import Parameter


def _bn_scale(bn_rv, bn_eps, bn_w):
    """gamma / sqrt(running_var + eps), per channel."""
    return (ember.ones_like(bn_rv) if bn_w is None else bn_w) * ember.rsqrt(bn_rv + bn_eps)


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(weight, bias) Parameters of the conv that computes bn(conv(x)); transpose: a ConvTranspose
    weight (in, out/groups, ...), scaled along dim 1."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = ember.zeros_like(bn_rm)
    if bn_b is None:
        bn_b = ember.zeros_like(bn_rm)
    scale = _bn_scale(bn_rv, bn_eps, bn_w)
    extra = [1] * (conv_w.dim() - 2)
    shape = [1, -1, *extra] if transpose else [-1, 1, *extra]
    fused_w = (conv_w * scale.reshape(shape)).to(weight_dtype)
    fused_b = ((conv_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` that computes bn(conv(x)); both must be in eval mode."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the batch norm must track running statistics")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(weight, bias) Parameters of the linear layer that computes bn(linear(x))."""
    if linear_b is None:
        linear_b = ember.zeros_like(bn_rm)
    if bn_b is None:
        bn_b = ember.zeros_like(bn_rm)
    scale = _bn_scale(bn_rv, bn_eps, bn_w)
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` that computes bn(linear(x)) (a BatchNorm1d over its outputs); both in eval mode."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the batch norm must track running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
