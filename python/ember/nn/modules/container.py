"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
import collections.abc
from collections import OrderedDict
import operator

import ember
from ember.nn.modules.module import Module, _add_indent
from ember.nn.parameter import Parameter


def _index(idx, n, kind):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


class Sequential(Module):
    """Runs its modules in order, feeding each one's output to the next."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(self), "Sequential")])
        # Renumber so that indices stay 0..n-1, as torch does.
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        """A new Sequential of self's modules then other's (the same module objects), numbered 0..n-1."""
        _check_sequential(other)
        return Sequential(*self, *other)

    def __iadd__(self, other):
        _check_sequential(other)
        for module in list(other):
            self.append(module)
        return self

    def __mul__(self, times):
        """A new Sequential running self's modules `times` times over: the same module objects (shared
        parameters), as torch does, not copies."""
        return Sequential(*(list(self) * _repeat_count(self, times)))

    __rmul__ = __mul__

    def __imul__(self, times):
        modules = list(self) * (_repeat_count(self, times) - 1)
        for module in modules:
            self.append(module)
        return self

    def pop(self, key):
        """Removes and returns the module at index `key` (a Sequential of them for a slice); the rest are
        renumbered 0..n-1."""
        module = self[key]
        del self[key]
        return module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


def _check_sequential(other):
    if not isinstance(other, Sequential):
        raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")


def _repeat_count(seq, times):
    if not isinstance(times, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(seq)} and {type(times)}")
    if times <= 0:
        raise ValueError(f"Non-positive multiplication factor {times} for {type(seq)}")
    return times


class ModuleList(Module):
    """A list of submodules, registered under "0", "1", ..."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        if isinstance(idx, slice):
            for key in keys[idx]:
                del self._modules[key]
        else:
            del self._modules[keys[_index(idx, len(self), "ModuleList")]]
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        """A new ModuleList of self's modules then those of `other` (any iterable of modules)."""
        return ModuleList(list(self) + list(other))

    def pop(self, key):
        """Removes and returns the module at index `key` (a ModuleList of them for a slice); the rest are
        renumbered 0..n-1."""
        module = self[key]
        del self[key]
        return module

    def __repr__(self):
        # Runs of modules that print the same are shown once, as "(0-2): 3 x Linear(...)" (as torch does).
        if len(self) == 0:
            return self._get_name() + "()"
        runs = []  # [first index, last index, repr]
        for i, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = []
        for first, last, text in runs:
            head = f"({first})" if first == last else f"({first}-{last}): {last - first + 1} x"
            lines.append(_add_indent(f"{head}: {text}" if first == last else f"{head} {text}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)


class ModuleDict(Module):
    """A dict of submodules keyed by name, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


class ParameterList(Module):
    """A list of Parameters, registered under "0", "1", ..."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx, param):
        idx = _index(idx, len(self), "ParameterList")
        if not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, params):
        return self.extend(params)

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({i}): {_describe_parameter(p)}" for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of Parameters keyed by name: tensors put in become Parameters (registered, so parameters()
    and state_dict() see them); other values are kept as they are.

    As in torch, update() (and the constructor) take a plain dict's entries in sorted key order, while an
    OrderedDict, a ParameterDict or a sequence of (key, value) pairs keeps its order: that order is the
    order of parameters(), hence of an optimizer's state_dict indices."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def _check_key(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}')")
        return key

    def __getitem__(self, key):
        return getattr(self, self._check_key(key))

    def __setitem__(self, key, value):
        attr = self._check_key(key)
        self._keys[key] = None
        if isinstance(value, ember.Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Removes and returns the last (key, value) put in."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for key in list(self._keys):
            del self[key]

    def copy(self):
        """A new ParameterDict holding the same Parameters, in the same order."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with `keys` (in their order), each set to `default`."""
        return ParameterDict([(k, default) for k in keys])

    def update(self, parameters):
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif isinstance(parameters, collections.abc.Mapping):
            items = sorted(parameters.items(), key=lambda kv: kv[0])
        elif isinstance(parameters, collections.abc.Iterable):
            items = []
            for i, pair in enumerate(parameters):
                if not isinstance(pair, collections.abc.Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{i} should be Iterable; is "
                                    f"{type(pair).__name__}")
                pair = tuple(pair)
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{i} has length {len(pair)}; "
                                     "2 is required")
                items.append(pair)
        else:
            raise TypeError(f"ParametersDict.update should be called with an iterable of key/value pairs, but "
                            f"got {type(parameters).__name__}")
        for key, value in items:
            self[key] = value

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        # dict | ParameterDict: other's type, as torch (a plain dict's update takes our keys() and [key]).
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_describe_parameter(p)}" for k, p in self.items())


def _describe_parameter(p):
    if not isinstance(p, ember.Tensor):
        return f"Object of type: {type(p).__name__}"
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    size = "x".join(str(s) for s in p.shape)
    device = f" ({p.device})" if p.device.type == "cuda" else ""
    return f"{kind} containing: [{p.dtype} of size {size}{device}]"
