"""Uneven inputs across ranks, as torch.distributed.algorithms.join.

Collectives only complete when every rank of the group calls them, so a rank
that runs out of data while the others keep training would leave them
waiting. Inside `with Join([joinables]):` a rank that leaves its loop enters
Join.__exit__, where it keeps *shadowing* the collectives of the ranks still
training: each iteration it takes part in one all-reduce that counts the
ranks still active (they contribute 1 from Join.notify_join_context, called
by their first joinable each iteration; joined ranks contribute 0), then runs
every joinable's JoinHook.main_hook, which issues the same collectives the
joinable issues on an active rank. When the count reaches 0 every rank has
joined: each hook's post_hook runs (DistributedDataParallel's broadcasts the
final model from the last rank to join) and the context exits everywhere.

With throw_on_early_termination=True, the first rank to join makes every rank
raise instead: active ranks learn it from a second all-reduce in
notify_join_context, which the joined rank answers with a 1.
"""
import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

import ember

# Shadowing this many iterations probably means the data is badly split.
_SKEW_WARNING = 1000


def _dist():
    import ember.distributed as dist  # imported late: ember.nn (DDP) imports this module while ember loads
    return dist


class JoinHook:
    """What a joined rank does in place of a Joinable's collectives. Both
    hooks do nothing unless overridden."""

    def main_hook(self):
        """Called once per iteration the active ranks still run: issue the
        collectives the Joinable issues in one iteration on an active rank."""

    def post_hook(self, is_last_joiner: bool):
        """Called once on every rank after all have joined; `is_last_joiner`
        says whether this rank was among the last ones to run out of data."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """Something that issues collectives each iteration and can shadow them
    once its rank has joined. A subclass calls Joinable.__init__, calls
    Join.notify_join_context(self) once per iteration before its collectives,
    and provides join_hook, join_device and join_process_group."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The JoinHook that shadows this joinable; `kwargs` are the extra
        keyword arguments given to Join."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of the small tensors Join all-reduces."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group the joinable communicates over."""


class _NotifyWork:
    """The pending all-reduce that counts the active ranks: wait(), then
    result()[0] holds how many ranks had not joined this iteration."""

    def __init__(self, work, count):
        self._work = work
        self._count = count

    def wait(self, timeout=None):
        if self._work is not None:
            self._work.wait()
            self._work = None
        return True

    def is_completed(self):
        return self._work is None or self._work.is_completed()

    def result(self):
        self.wait()
        return [self._count]


class Join:
    """Context manager for training with uneven inputs; see the module
    docstring. `joinables` share one process group; the first one counts the
    active ranks. Extra keyword arguments go to every joinable's join_hook."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        joinables = list(joinables)
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        for j in joinables:
            if not isinstance(j, Joinable):
                raise TypeError(f"Join: every joinable must be a Joinable, got {type(j).__name__}")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self):
        for k, j in enumerate(self._joinables):
            j._join_config = _JoinConfig(enable=self._enable,
                                         throw_on_early_termination=self._throw_on_early_termination,
                                         is_first_joinable=k == 0)

    def _extract_dist_info(self):
        group = None
        for j in self._joinables:
            if group is None:
                group = j.join_process_group
            elif group is not j.join_process_group and group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
        self._process_group = group
        self._rank = group.rank()
        self._device = self._joinables[0].join_device

    def __enter__(self):
        self._set_joinable_configs()  # again: the same Join may be entered more than once
        return self

    def __exit__(self, type, value, traceback):
        try:
            if not self._enable or type is not None:
                return  # an exception in the body propagates as it is
            is_last_joiner = True
            shadowed = 0
            while self._count_active_ranks() > 0:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                shadowed += 1
                if shadowed == _SKEW_WARNING + 1:
                    warnings.warn(f"Detected uneven input skew of greater than {_SKEW_WARNING}. This means that "
                                  f"rank {self._rank} has at least {_SKEW_WARNING} fewer inputs than other "
                                  "currently-active ranks. This level of skew could lead to performance "
                                  "degradation during training.", stacklevel=2)
            for hook in self._join_hooks:
                hook.post_hook(is_last_joiner)
        finally:
            # Outside the context the joinables communicate as usual again.
            for j in self._joinables:
                j._join_config = _JoinConfig.construct_disabled_join_config()

    def _count_active_ranks(self):
        """Shadows notify_join_context's all-reduce: this rank adds 0."""
        count = ember.zeros(1, device=self._device)
        _dist().all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self):
        """Answers the active ranks' termination check with a 1, then raises."""
        flag = ember.ones(1, device=self._device)
        _dist().all_reduce(flag, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by an active rank's joinable once per iteration, before its
        collectives. For the first joinable of an enabled Join, starts the
        all-reduce that counts the active ranks and returns its work handle
        (result()[0] is the count once waited); otherwise returns None. With
        throw_on_early_termination, raises on every active rank once any
        rank has joined."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable).__name__} constructor calls the ``Joinable`` "
                                 "constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        dist = _dist()
        device, group = joinable.join_device, joinable.join_process_group
        count = ember.ones(1, device=device)
        work = dist.all_reduce(count, group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = ember.zeros(1, device=device)
            dist.all_reduce(flag, group=group)
            if flag.item():
                work.wait()
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return _NotifyWork(work, count)
