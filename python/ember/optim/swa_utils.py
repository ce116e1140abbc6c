"""ember.optim.swa_utils (as torch.optim.swa_utils): AveragedModel (stochastic weight averaging and
exponential moving averages of a model's parameters), SWALR, and update_bn."""
import copy
import itertools
import math

import ember
from ember.nn.modules.module import Module
from ember.optim.lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of every averaged tensor: ema = decay * ema + (1 - decay) * current."""
    def ema_update(ema_param_list, current_param_list, _num_averaged):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            p_ema.lerp_(p_model.to(p_ema.dtype), 1.0 - decay)
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place update of every averaged tensor to the running mean of all models seen."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = float(num_averaged.item()) if isinstance(num_averaged, ember.Tensor) else float(num_averaged)
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            p_avg.add_((p_model.to(p_avg.dtype) - p_avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers=True) are the average of those of
    the models passed to update_parameters: the running mean by default (SWA), or what avg_fn (one tensor
    at a time, returning the new average) or multi_avg_fn (all tensors, in place) compute. The first update
    copies the model. n_averaged counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return [t for t in itertools.chain(model.parameters(), model.buffers())]
        return list(model.parameters())

    def update_parameters(self, model):
        averaged = [t.detach() for t in self._tensors(self.module)]
        current = [t.detach().to(a.device) for t, a in zip(self._tensors(model), averaged)]
        with ember.no_grad():
            if int(self.n_averaged.item()) == 0:
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(p_model)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, self.n_averaged.to(averaged[0].device) if averaged else 0)
            else:
                avg_fn = self.avg_fn
                n = self.n_averaged.to(averaged[0].device) if averaged else self.n_averaged
                for p_avg, p_model in zip(averaged, current):
                    if avg_fn is None:
                        if p_avg.is_floating_point():
                            p_avg.add_((p_model - p_avg) / (float(n.item()) + 1))
                        else:
                            p_avg.copy_(p_model)
                    else:
                        p_avg.copy_(avg_fn(p_avg, p_model, n))
            if not self.use_buffers:
                # Buffers (e.g. batch-norm statistics) follow the model; update_bn recomputes them.
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    """Recomputes the running statistics of model's batch-norm layers with one pass over `loader` (each
    item a batch, or a list/tuple whose first element is the batch): the plain average over the batches."""
    from ember.nn.modules.normalization import _BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # a cumulative average over the pass
    with ember.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its current value to swa_lr over anneal_epochs steps
    (cosine or linear), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(swa_lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                             f"{len(swa_lrs)}, optimizer.param_groups has {len(optimizer.param_groups)}")
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # The learning rate before the previous step is recovered from the current one, so SWALR may take
        # over from another scheduler mid-training.
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha) for group in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(groups, prev_lrs)]

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}
