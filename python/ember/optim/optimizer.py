"""Optimizer: param groups, per-parameter state and torch's state_dict layout.

Subclasses implement step() by gathering one group's parameters, gradients and
state into lists and making one multi-tensor C++ call (ember._C._optim_*).
Every subclass's step runs the step hooks (_step_hooks.py).
"""
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import ember

from ._step_hooks import add_hook, with_step_hooks
from ._step_hooks import register_optimizer_step_post_hook, register_optimizer_step_pre_hook  # noqa: F401


class _RequiredParameter:
    """Marks a hyper-parameter that has no default (a group must give it)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if callable(cls.__dict__.get("step")):
            cls.step = with_step_hooks(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, ember.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors "
                            f"or dicts, but got {type(params).__name__}")
        if isinstance(params, set):
            warnings.warn("optimizer parameters need to be organized in ordered collections, but the ordering "
                          "of tensors in sets will change between runs. Please use a list instead. This will be "
                          "an error in a future release.", FutureWarning, stacklevel=3)
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before each step();
        returns a handle whose remove() unregisters it."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs), run after each step(); returns a removable handle."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, ember.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        _split_names(param_group)
        for param in param_group["params"]:
            if not isinstance(param, ember.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(set(ids)) != len(ids):
            # torch keeps the duplicates (each occurrence is stepped) and only warns, for now.
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in group) != ("param_names" in param_group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def _run_closure(self, closure):
        if closure is None:
            return None
        with ember.enable_grad():
            return closure()

    # ---- state_dict in torch's layout: parameters are replaced by their
    # index in the order of param_groups, state is keyed by that index.
    # A parameter listed twice in a group takes the index of its last place
    # (torch's numbering, which then skips the first place's index).
    def state_dict(self):
        index_of = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            earlier = set(index_of)
            for i, p in enumerate(group["params"], start):
                if id(p) not in earlier:
                    index_of[id(p)] = i
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(group["params"])
            groups.append(packed)
        state = {index_of[id(p)]: value for p, value in self.state.items() if id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match "
                                 "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {k: self._cast_state(param, k, v) for k, v in value.items()}
            else:
                state[key] = deepcopy(value)
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            new_group = {k: deepcopy(v) for k, v in saved.items() if k != "params"}
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            new_groups.append(new_group)
        # Through __setstate__, where a subclass fills in the keys an older checkpoint lacks.
        self.__setstate__({"state": state, "param_groups": new_groups})

    @staticmethod
    def _cast_state(param, key, value):
        # Loaded buffers are copies (the optimizer that saved them may keep
        # stepping) in the parameter's dtype and device; 'step' stays as saved.
        if not isinstance(value, ember.Tensor):
            return deepcopy(value)
        if key == "step":
            return value.clone()
        if value.is_floating_point():
            return value.to(device=param.device, dtype=param.dtype, copy=True)
        return value.to(device=param.device, copy=True)


def _split_names(param_group):
    """named_parameters() given as params: (name, tensor) pairs become the tensors, their names the
    group's "param_names" (as torch records them; they are saved in state_dict and not used to match)."""
    params = param_group["params"]
    named = [isinstance(p, tuple) for p in params]
    if not any(named):
        return
    if not all(named):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    param_group["param_names"] = [name for name, _ in params]
    param_group["params"] = [p for _, p in params]


def _group_with_grads(optimizer, group, with_state=True, with_step=False):
    """The params of `group` that have a gradient, their grads and (when
    `with_state`, creating empty ones as torch does) their state dicts; with
    `with_step`, each state gets its step counter on first use."""
    params = [p for p in group["params"] if p.grad is not None]
    grads = [p.grad for p in params]
    states = [optimizer.state[p] for p in params] if with_state else [{} for _ in params]
    if with_step:
        for s in states:
            if "step" not in s:
                s["step"] = _new_step()
    return [_real_view(p) for p in params], [_real_view(g) for g in grads], states


def _share_new_state(params, states, names):
    """A parameter listed twice in a group is stepped once per place, in order, as torch's (CPU) loop
    does. The multi-tensor calls would create a separate new buffer for each place, so here a repeated
    parameter's missing buffers `names` are created (zeros, torch's start) before the call."""
    if len({id(s) for s in states}) == len(states):
        return
    for p, s in zip(params, states):
        for name in names:
            if s.get(name) is None:
                s[name] = ember.zeros_like(p)


def _real_view(t):
    """A complex tensor as its float view with a trailing dim of 2: as torch's optimizers do, a complex
    parameter is updated as a pair of reals (its state tensors have that shape too)."""
    if not t.is_complex():
        return t
    with ember.no_grad():
        return ember.view_as_real(t)


def _new_step():
    return ember.tensor(0.0, dtype=ember.float32)
