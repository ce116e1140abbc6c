"""F.embedding with max_norm (the looked-up rows are renormalized in place first, as torch does) and
sparse=True (ember has no sparse tensors: the gradient is dense; optim.SparseAdam takes it)."""
import ember
from ember import _C


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Scales every row of `weight` that `input` names and whose norm exceeds max_norm down to
    max_norm (in place, outside autograd); returns weight (torch.embedding_renorm_)."""
    with ember.no_grad():
        rows = ember.unique(input.reshape(-1))
        picked = weight[rows]
        norms = picked.norm(p=norm_type, dim=-1, keepdim=True)
        # torch's 1e-7 keeps the scale finite and leaves renormalized rows just under max_norm
        scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7), ember.ones_like(norms))
        weight[rows] = picked * scale
    return weight


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    return _C._nn.embedding(input, weight, padding_idx, None, norm_type, scale_grad_by_freq, False)
