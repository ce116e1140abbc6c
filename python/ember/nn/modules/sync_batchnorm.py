"""SyncBatchNorm (torch.nn.SyncBatchNorm): batch normalization whose
statistics cover the whole global batch of a data-parallel job.

In training, with a process group of more than one rank, each rank sums its
part of the batch per channel and one all_reduce adds the sums of every rank
(then a second one the squared deviations from the global mean, which keeps
the variance exact); backward all-reduces the two per-channel sums its input
gradient needs. The weight and bias gradients stay per rank: DDP averages them
like every other parameter's. Otherwise (eval, one process, no process group)
it is BatchNorm.
"""
import ember
from ember.autograd import Function

from .normalization import _BatchNorm


def _channel_dims(x):
    return [d for d in range(x.dim()) if d != 1]


def _per_channel(t, x):
    """A [C] tensor shaped to broadcast against x ([N, C, ...])."""
    return t.view(1, -1, *([1] * (x.dim() - 2)))


def _all_reduce(t, group):
    import ember.distributed as dist
    dist.all_reduce(t, group=group)
    return t


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        dims = _channel_dims(x)
        c = x.shape[1]
        work = x.to(ember.float32) if x.dtype in (ember.float16, ember.bfloat16) else x
        # One collective for the sums and the element count.
        stats = ember.cat([work.sum(dims), ember.full((1,), float(work.numel() // max(c, 1)), dtype=work.dtype,
                                                      device=work.device)])
        _all_reduce(stats, group)
        count = float(stats[c].item())
        if count <= 1:
            raise ValueError(f"SyncBatchNorm: expected more than 1 value per channel across all ranks when "
                             f"training, got input size {list(x.shape)} and {int(count)} value(s) in all")
        mean = stats[:c] / count
        centered = work - _per_channel(mean, work)
        var = _all_reduce((centered * centered).sum(dims), group) / count
        invstd = (var + eps).rsqrt()
        out = centered * _per_channel(invstd, work)
        if weight is not None:
            out = out * _per_channel(weight, work) + _per_channel(bias, work)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
            running_var.mul_(1 - momentum).add_((var * (count / (count - 1))).to(running_var.dtype), alpha=momentum)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.count = count
        ctx.group = group
        return out.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, mean, invstd = ctx.saved_tensors
        dims = _channel_dims(x)
        c = x.shape[1]
        work = x.to(mean.dtype)
        dy = grad_out.to(mean.dtype)
        xmu = work - _per_channel(mean, work)
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        grad_weight = grad_bias = None
        if weight is not None:
            grad_weight = (sum_dy_xmu * invstd).to(weight.dtype) if ctx.needs_input_grad[1] else None
            grad_bias = sum_dy.to(weight.dtype) if ctx.needs_input_grad[2] else None
        grad_x = None
        if ctx.needs_input_grad[0]:
            both = _all_reduce(ember.cat([sum_dy, sum_dy_xmu]), ctx.group)
            mean_dy = both[:c] / ctx.count
            mean_dy_xmu = both[c:] / ctx.count
            scale = invstd if weight is None else invstd * weight.to(invstd.dtype)
            grad_x = (dy - _per_channel(mean_dy, dy)
                      - xmu * _per_channel(invstd * invstd * mean_dy_xmu, dy)) * _per_channel(scale, dy)
            grad_x = grad_x.to(x.dtype)
        return grad_x, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, process_group=None,
                 device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _world_size(self):
        import ember.distributed as dist
        if not dist.is_initialized():
            return 1
        return dist.get_world_size(self.process_group)

    def forward(self, input):
        self._check_input_dim(input)
        if not self.training or self._world_size() == 1:
            return super().forward(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            with ember.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        running_mean = self.running_mean if self.track_running_stats else None
        running_var = self.running_var if self.track_running_stats else None
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean, running_var, self.eps,
                                            momentum, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """A copy of module's structure in which every BatchNorm*d is a
        SyncBatchNorm holding the same parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                with ember.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.train(module.training)
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


__all__ = ["SyncBatchNorm"]
