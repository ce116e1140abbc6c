"""Optimizer: param groups, per-parameter state and torch's state_dict layout.

Subclasses implement step() by gathering one group's parameters, gradients and
state into lists and making one multi-tensor C++ call (ember._C._optim_*).
"""
from collections import defaultdict
from copy import deepcopy
from itertools import chain

import ember


class _RequiredParameter:
    """Marks a hyper-parameter that has no default (a group must give it)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, ember.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors "
                            f"or dicts, but got {type(params).__name__}")
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
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
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
    def state_dict(self):
        index_of = {}
        next_index = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                if id(p) not in index_of:
                    index_of[id(p)] = next_index
                    next_index += 1
            packed["params"] = [index_of[id(p)] for p in group["params"]]
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
            new_groups.append(new_group)
        self.state = state
        self.param_groups = new_groups

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


def _real_view(t):
    """A complex tensor as its float view with a trailing dim of 2: as torch's optimizers do, a complex
    parameter is updated as a pair of reals (its state tensors have that shape too)."""
    if not t.is_complex():
        return t
    with ember.no_grad():
        return ember.view_as_real(t)


def _new_step():
    return ember.tensor(0.0, dtype=ember.float32)
