"""ctc_loss: the connectionist temporal classification loss.

The alignment recursion runs in log space over the blank-extended targets [N, 2L+1]. On the CPU in
float32/float64 it is one C++ op (core/ops/ctc.cpp: alpha forward, beta backward, per sample in parallel).
Elsewhere (CUDA, 16-bit types) it is composed of ember ops, vectorised over the batch and the label
positions, with a Python loop over time, and autograd provides the backward (twice differentiable); its
three-way log-sum-exp is written so that positions no path can reach (-inf) give zero gradient instead of
the NaN a plain logsumexp gives there. Both give an impossible alignment a zero gradient.

The gradient is the true derivative with respect to `log_probs`. torch's kernel returns that derivative
plus exp(log_probs), a term that a preceding log_softmax cancels, so the gradients of the logits agree."""
import numpy as np

import ember

__all__ = ["ctc_loss"]

_NEG_INF = float("-inf")
# The C++ recursion where it applies (tests turn it off to compare it with the composite).
_NATIVE = True


def _lengths(value, name, count):
    values = value.tolist() if isinstance(value, ember.Tensor) else list(value)
    values = [int(v) for v in (values if isinstance(values, list) else [values])]
    if len(values) != count:
        raise RuntimeError(f"ctc_loss: expected {name} to have {count} values (one per batch element), "
                           f"got {len(values)}")
    if any(v < 0 for v in values):
        raise RuntimeError(f"ctc_loss: {name} must be non-negative, got {values}")
    return values


def _log_add3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all three are -inf, with finite gradients."""
    m = ember.maximum(ember.maximum(a, b), c)
    dead = m == _NEG_INF
    shift = ember.where(dead, ember.zeros_like(m), m)
    total = (a - shift).exp() + (b - shift).exp() + (c - shift).exp()
    total = ember.where(dead, ember.ones_like(total), total)
    return ember.where(dead, ember.full_like(m, _NEG_INF), shift + total.log())


def _extended_targets(targets, target_lengths, batch, blank):
    """[N, 2*Lmax+1] labels blank, l1, blank, l2, ..., blank (padded with blank), and where the recursion
    may skip from s-2 (a label that differs from the one two places back)."""
    flat = targets.detach().cpu().long().numpy()
    longest = max(target_lengths, default=0)
    labels = np.zeros((batch, longest), dtype=np.int64)
    if flat.ndim == 2:
        if flat.shape[0] != batch:
            raise RuntimeError(f"ctc_loss: expected targets of size [{batch}, S] (one row per batch element), "
                               f"got {list(targets.shape)}")
        if longest > flat.shape[1]:
            raise RuntimeError(f"ctc_loss: target_lengths {target_lengths} exceed the targets' second dimension "
                               f"{flat.shape[1]}")
        for n, length in enumerate(target_lengths):
            labels[n, :length] = flat[n, :length]
    elif flat.ndim == 1:
        if sum(target_lengths) != flat.shape[0]:
            raise RuntimeError(f"ctc_loss: concatenated 1-D targets hold {flat.shape[0]} labels, but "
                               f"target_lengths sum to {sum(target_lengths)}")
        offsets = np.cumsum([0] + target_lengths)
        for n, length in enumerate(target_lengths):
            labels[n, :length] = flat[offsets[n]:offsets[n] + length]
    else:
        raise RuntimeError(f"ctc_loss: expected 1-D (concatenated) or 2-D (padded) targets, got "
                           f"{list(targets.shape)}")
    extended = np.full((batch, 2 * longest + 1), blank, dtype=np.int64)
    extended[:, 1::2] = labels
    skip = np.zeros(extended.shape, dtype=bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    return extended, skip


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """log_probs [T, N, C] (or [T, C]) log-probabilities, e.g. from log_softmax; targets [N, S] padded or
    1-D concatenated; lengths as tensors or sequences. reduction 'mean' divides each loss by its target
    length, then averages over the batch, as torch does."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"ctc_loss: {reduction} is not a valid value for reduction")
    if not isinstance(log_probs, ember.Tensor) or not log_probs.dtype.is_floating_point:
        raise RuntimeError("ctc_loss: expected log_probs to be a floating point tensor")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of size [T, N, C] or [T, C], got {list(log_probs.shape)}")
    T, N, C = log_probs.shape
    if T == 0:
        raise RuntimeError(f"ctc_loss: expected at least one time step, got log_probs of size {list(log_probs.shape)}")
    if not 0 <= int(blank) < C:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {C}), got {blank}")
    in_lengths = _lengths(input_lengths, "input_lengths", N)
    tg_lengths = _lengths(target_lengths, "target_lengths", N)
    if any(v > T for v in in_lengths):
        raise RuntimeError(f"ctc_loss: expected input_lengths to have value at most {T}, but got {in_lengths}")
    extended, skip = _extended_targets(targets, tg_lengths, N, int(blank))
    if ((extended < 0) | (extended >= C)).any():
        raise IndexError(f"ctc_loss: target labels must lie in [0, {C}), got labels outside it")
    device = log_probs.device
    if _NATIVE and device.type == "cpu" and log_probs.dtype in (ember.float32, ember.float64):
        loss = ember._C._nn._ctc_alignment_nll(log_probs, ember.tensor(extended), in_lengths, tg_lengths, int(blank))
    else:
        loss = _composite_nll(log_probs, extended, skip, in_lengths, tg_lengths)
    if any(v == 0 for v in in_lengths):  # no frames: probability 1 for an empty target, 0 otherwise
        empty = ember.tensor([v == 0 for v in in_lengths], device=device)
        impossible = ember.tensor([0.0 if n == 0 else float("inf") for n in tg_lengths], dtype=loss.dtype,
                                  device=device)
        loss = ember.where(empty, impossible, loss)
    if zero_infinity:
        loss = ember.where(loss == float("inf"), ember.zeros_like(loss), loss)
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    divisor = ember.tensor(np.maximum(np.array(tg_lengths), 1), dtype=loss.dtype, device=device)
    return (loss / divisor).mean()


def _composite_nll(log_probs, extended, skip, in_lengths, tg_lengths):
    """Per-sample negative log-likelihood [N] from the alpha recursion in ember ops."""
    T, N, _ = log_probs.shape
    device, S = log_probs.device, extended.shape[1]
    labels = ember.tensor(extended, device=device)
    emissions = log_probs.gather(2, labels.unsqueeze(0).expand(T, N, S))  # [T, N, S]
    can_skip = ember.tensor(skip, device=device)
    running = ember.tensor(np.array(in_lengths)[:, None], device=device)  # [N, 1]
    minus_inf = ember.full((N, 1), _NEG_INF, dtype=log_probs.dtype, device=device)
    start = np.full((N, S), _NEG_INF)
    start[:, :2] = 0.0
    alpha = emissions[0] + ember.tensor(start, dtype=log_probs.dtype, device=device)
    for t in range(1, max(in_lengths, default=0)):
        one_back = ember.cat([minus_inf, alpha[:, :-1]], 1)
        two_back = ember.cat([minus_inf, minus_inf, alpha[:, :-2]], 1)[:, :S]
        two_back = ember.where(can_skip, two_back, ember.full_like(two_back, _NEG_INF))
        stepped = _log_add3(alpha, one_back, two_back) + emissions[t]
        alpha = ember.where(running > t, stepped, alpha)  # finished sequences keep their last alpha
    # Paths end on the last label or the blank after it.
    ends = np.array(tg_lengths) * 2
    last = alpha.gather(1, ember.tensor(ends[:, None], device=device)).squeeze(1)
    before = alpha.gather(1, ember.tensor(np.maximum(ends - 1, 0)[:, None], device=device)).squeeze(1)
    before = ember.where(ember.tensor(ends > 0, device=device), before, ember.full_like(before, _NEG_INF))
    return -_log_add3(last, before, ember.full_like(last, _NEG_INF))
