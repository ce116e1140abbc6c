"""MultiplicativeLR and ChainedScheduler (torch.optim.lr_scheduler)."""
from .lr_scheduler import LambdaLR, LRScheduler, _lambdas_per_group


class MultiplicativeLR(LRScheduler):
    """Multiplies each group's lr by lr_lambda(epoch) at every step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        self._is_initial = False
        super().__init__(optimizer, last_epoch)

    def _initial_step(self):
        # The first step (at construction) keeps the lr; later ones multiply it.
        self._is_initial = True
        try:
            super()._initial_step()
        finally:
            self._is_initial = False

    # Saved as LambdaLR saves its lambdas: callable objects keep their __dict__, plain functions nothing.
    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [group["lr"] for group in groups]
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, groups)]


class ChainedScheduler(LRScheduler):
    """Steps every scheduler of the list at each step(), so their effects compose."""

    def __init__(self, schedulers, optimizer=None):
        from ._lr_scheduler_extra import ReduceLROnPlateau

        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                                 f"kwargs to be specified when calling `step`, but got one at index {i} in the given "
                                 "schedulers sequence.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                                 f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is "
                                 f"different from {type(optimizer).__name__}.")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)
