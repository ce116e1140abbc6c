"""More torch.nn.functional losses, composed of ember ops (every device, autograd): margin_ranking_loss,
cosine_embedding_loss, triplet_margin_loss, poisson_nll_loss, gaussian_nll_loss, soft_margin_loss,
multilabel_soft_margin_loss, multi_margin_loss, hinge_embedding_loss, triplet_margin_with_distance_loss,
multilabel_margin_loss; and the front-ends of the C++ losses mse_loss, l1_loss, smooth_l1_loss, nll_loss
and kl_div, which add torch's warnings (legacy arguments, a target of another size than the input).
Each takes torch's arguments, reduction 'none' | 'mean' | 'sum'; the deprecated size_average / reduce,
when given, decide the reduction with a UserWarning, as in torch (nn/_reduction.py).
Re-exported by ember.nn.functional (over the kernels of the same name)."""
import math
import warnings

import numpy as np

import ember
from ember import _C
from ember.nn._functional_extra import pairwise_distance, warn_target_size
from ember.nn._reduction import reduce_loss as _reduce
from ember.nn._reduction import reduction_arg

__all__ = ["margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "hinge_embedding_loss", "triplet_margin_with_distance_loss", "multilabel_margin_loss",
           "mse_loss", "l1_loss", "smooth_l1_loss", "nll_loss", "kl_div"]

_nn = _C._nn


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target)^2."""
    reduction = reduction_arg("mse_loss", size_average, reduce, reduction)
    warn_target_size(input, target)
    return _nn.mse_loss(input, target, reduction=reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|."""
    reduction = reduction_arg("l1_loss", size_average, reduce, reduction)
    warn_target_size(input, target)
    return _nn.l1_loss(input, target, reduction=reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - beta / 2 elsewhere, d = input - target."""
    reduction = reduction_arg("smooth_l1_loss", size_average, reduce, reduction)
    warn_target_size(input, target)
    return _nn.smooth_l1_loss(input, target, reduction=reduction, beta=beta)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] (times weight[target[n]]); 'mean' divides by the summed weights."""
    reduction = reduction_arg("nll_loss", size_average, reduce, reduction)
    return _nn.nll_loss(input, target, weight, ignore_index=ignore_index, reduction=reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log target - input), input being log-probabilities (and target too with log_target)."""
    legacy = size_average is not None or reduce is not None
    reduction = reduction_arg("kl_div", size_average, reduce, reduction)
    if reduction == "mean" and not legacy:  # as torch: the classic mistake for a KL divergence per sample
        warnings.warn("kl_div: reduction='mean' divides the summed loss by the number of elements (batch size "
                      "times support size), not by the batch size; reduction='batchmean' gives the KL divergence "
                      "as defined, and torch plans to make 'mean' behave like it.", UserWarning, stacklevel=2)
    return _nn.kl_div(input, target, reduction=reduction, log_target=log_target)


def _shapes(*tensors):
    return ", ".join(str(list(t.shape)) for t in tensors)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = reduction_arg("margin_ranking_loss", size_average, reduce, reduction)
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss: All input tensors should have same dimension but got sizes: "
                           f"{_shapes(input1, input2, target)}")
    loss = ember.clamp(-target * (input1 - input2) + margin, min=0.0)
    return _reduce(loss, reduction, "margin_ranking_loss")


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where target is -1."""
    reduction = reduction_arg("cosine_embedding_loss", size_average, reduce, reduction)
    if input1.dim() not in (1, 2) or input1.dim() != input2.dim() or target.dim() != input1.dim() - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected 1-D or 2-D inputs of the same rank and a target of one "
                           f"rank less, got {_shapes(input1, input2, target)}")
    dim = target.dim()
    eps = 1e-12  # torch's: keeps a zero vector's cosine finite
    dot = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = dot / ember.sqrt(mag)
    zero = ember.zeros_like(cos)
    loss = ember.where(target == 1, 1.0 - cos, zero) + ember.where(target == -1, ember.clamp(cos - margin, min=0.0),
                                                                   zero)
    return _reduce(loss, reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin) with d the p-norm distance; swap uses min(d(a, n), d(p, n))."""
    reduction = reduction_arg("triplet_margin_loss", size_average, reduce, reduction)
    if not (anchor.dim() == positive.dim() == negative.dim()) or anchor.dim() not in (1, 2):
        raise RuntimeError(f"triplet_margin_loss: The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions (1 or 2), but got: anchor {anchor.dim()}D, positive "
                           f"{positive.dim()}D, and negative {negative.dim()}D inputs")
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: expected margin to be greater than 0, got {margin} instead")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ember.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = ember.clamp(margin + d_pos - d_neg, min=0.0)
    return _reduce(loss, reduction, "triplet_margin_loss")


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target * input (log_input), else input - target * log(input + eps); full adds
    Stirling's approximation of log(target!) where target > 1."""
    reduction = reduction_arg("poisson_nll_loss", size_average, reduce, reduction)
    if log_input:
        loss = ember.exp(input) - target * input
    else:
        loss = input - target * ember.log(input + eps)
    if full:
        safe = ember.where(target > 1, target, ember.ones_like(target))  # keeps log() finite where masked
        stirling = safe * ember.log(safe) - safe + 0.5 * ember.log(2 * math.pi * safe)
        loss = loss + ember.where(target > 1, stirling, ember.zeros_like(stirling))
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) if full), var clamped to >= eps
    (its gradient passes through the clamp, as in torch). var may have one dimension less than input or
    a last dimension of 1 (one variance shared by the last dimension)."""
    if isinstance(var, (int, float)):
        var = ember.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size: input {list(input.shape)}, var "
                             f"{list(var.shape)}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"gaussian_nll_loss: {reduction} is not valid")
    if bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    held = var.detach()
    var = var + (ember.clamp(held, min=eps) - held)  # the clamped value, the identity's gradient
    loss = 0.5 * (ember.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    reduction = reduction_arg("soft_margin_loss", size_average, reduce, reduction)
    loss = ember.log1p(ember.exp(-target * input))
    return _reduce(loss, reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), weighted, averaged over the classes (last dim)."""
    reduction = reduction_arg("multilabel_soft_margin_loss", size_average, reduce, reduction)
    def logsigmoid(x):
        return -ember._C._nn.softplus(-x)

    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1] if input.dim() > 0 else loss
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Per sample: sum over classes i != y of max(0, margin - x[y] + x[i])^p (times weight[y]) / C."""
    reduction = reduction_arg("multi_margin_loss", size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("multi_margin_loss: only p == 1 and p == 2 supported")
    if input.dim() not in (1, 2) or target.dim() != input.dim() - 1:
        raise RuntimeError(f"multi_margin_loss: expected a 1-D or 2-D input and a target of one rank less, got "
                           f"input {list(input.shape)} and target {list(target.shape)}")
    if target.dtype != ember.int64:
        raise RuntimeError(f"multi_margin_loss: expected target of dtype int64, got {target.dtype}")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    y = (target if batched else target.unsqueeze(0)).unsqueeze(1)
    c = x.shape[1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != c):
        raise RuntimeError(f"multi_margin_loss: inconsistent weight size, expected [{c}] but got "
                           f"{list(weight.shape)}")
    if y.numel() and (bool((y < 0).any()) or bool((y >= c).any())):
        raise RuntimeError(f"multi_margin_loss: target out of range for {c} classes")
    z = ember.clamp(margin - x.gather(1, y) + x, min=0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, y.reshape(-1)).unsqueeze(1)
    classes = ember.arange(c, device=x.device).unsqueeze(0)
    z = ember.where(classes == y, ember.zeros_like(z), z)
    loss = z.sum(1) / c
    return _reduce(loss if batched else loss.squeeze(0), reduction, "multi_margin_loss")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1."""
    reduction = reduction_arg("hinge_embedding_loss", size_average, reduce, reduction)
    zero = ember.zeros_like(input)
    margin_part = ember.where(target != 1, ember.clamp(margin - input, min=0.0), zero)
    self_part = ember.where(target != -1, input, zero)
    return _reduce(margin_part + self_part, reduction, "hinge_embedding_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """triplet_margin_loss with any distance (a callable of two tensors; pairwise_distance by default)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError(f"triplet_margin_with_distance_loss: The anchor, positive, and negative tensors are "
                           f"expected to have the same number of dimensions, but got: anchor {anchor.dim()}D, "
                           f"positive {positive.dim()}D, and negative {negative.dim()}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = ember.minimum(d_neg, distance(positive, negative))
    loss = ember.clamp(margin + d_pos - d_neg, min=0.0)
    return _reduce(loss, reduction, "triplet_margin_with_distance_loss")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample: sum over its target classes j (target's leading entries, up to the first -1) and the
    non-target classes i of max(0, 1 - (x[j] - x[i])), divided by the number of classes. The targets are
    read on the host to build the [N, K] gather of target scores."""
    reduction = reduction_arg("multilabel_margin_loss", size_average, reduce, reduction)
    if input.dim() not in (0, 1, 2) or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"multilabel_margin_loss: expected a 0-D, 1-D or 2-D input and a target of the same "
                           f"shape, got input {list(input.shape)} and target {list(target.shape)}")
    if target.dtype != ember.int64:
        raise RuntimeError(f"multilabel_margin_loss: expected target of dtype int64, got {target.dtype}")
    batched = input.dim() == 2
    x = input.reshape(-1 if batched else 1, input.shape[-1] if input.dim() else 1)
    n, c = x.shape
    labels = target.detach().cpu().numpy().reshape(n, c)
    if labels.size and (labels.max() >= c or labels.min() < -1):
        raise RuntimeError(f"multilabel_margin_loss: target values must be class indices in [0, {c}) or -1, got "
                           f"{labels.tolist()}")
    # Each row's targets are its entries before the first -1.
    ended = np.cumsum(labels < 0, axis=1) > 0
    valid = ~ended
    is_target = np.zeros((n, c), dtype=bool)
    rows = np.repeat(np.arange(n), c).reshape(n, c)
    is_target[rows[valid], labels[valid]] = True
    device = x.device
    index = ember.tensor(np.where(valid, labels, 0), device=device)
    scores = x.gather(1, index)  # [N, K = C]
    margins = ember.clamp(1.0 - scores.unsqueeze(2) + x.unsqueeze(1), min=0.0)  # [N, K, C]
    keep = ember.tensor(valid[:, :, None] & ~is_target[:, None, :], device=device)
    loss = ember.where(keep, margins, ember.zeros_like(margins)).sum((1, 2)) / c
    return _reduce(loss if batched else loss.reshape(()), reduction, "multilabel_margin_loss")
