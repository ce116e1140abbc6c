"""ember.nn.Module: the base class of every layer, with torch.nn.Module's semantics."""
from collections import OrderedDict, namedtuple
import copy
import itertools
import warnings

import ember
from ember.nn.modules.backward_hooks import BackwardHookCall
from ember.nn.parameter import Buffer, Parameter
from ember.nn._uninitialized import is_lazy


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by register_*_hook; .remove() unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict):
        self._hooks_dict = hooks_dict
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        self._hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_indent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class Module:
    """Base class for layers: holds parameters, buffers and submodules by name."""

    training: bool
    # The layout version of this module's state_dict entries, recorded in state_dict()._metadata and
    # handed to _load_from_state_dict as local_metadata["version"] (torch's convention).
    _version: int = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        # object.__setattr__ bypasses our own __setattr__, which needs these dicts.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks_with_kwargs", set())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks_with_kwargs", set())
        object.__setattr__(self, "_forward_hooks_always_called", set())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_post_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_state_dict_hooks", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- registration -------------------------------------------------------------------------

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')

    def register_parameter(self, name, param):
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(ember.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, ember.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(ember Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    def get_extra_state(self):
        """Override (with set_extra_state) to keep non-tensor state in state_dict under '_extra_state'."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _has_extra_state(self):
        return type(self).get_extra_state is not Module.get_extra_state

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts):
            for dd in dicts:
                if name in dd:
                    if isinstance(dd, dict):
                        del dd[name]
                    else:
                        dd.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(ember.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer):
            remove_from(self.__dict__, self._parameters, self._modules)
            self.register_buffer(name, value.data, value.persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, ember.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(ember.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def _get_name(self):
        return type(self).__name__

    # ---- iteration ----------------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in memo:
                        continue
                    memo.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ---- modes and bulk changes ---------------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                    p.grad = g
                with ember.no_grad():
                    g.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        """Replaces every parameter's and buffer's data by fn(tensor).

        Parameters keep their identity (their .data is swapped, as torch does by default), so an
        optimizer built before model.to(...) still holds the live parameters.
        """
        for module in self.children():
            module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with ember.no_grad():
                new = fn(param)
                if new is not param:
                    param.data = new
                if param.grad is not None:
                    new_grad = fn(param.grad)
                    if new_grad is not param.grad:
                        param.grad.data = new_grad
        for name, buf in self._buffers.items():
            if buf is None:
                continue
            if is_lazy(buf):  # a lazy module's placeholder stays one: only its empty data moves
                with ember.no_grad():
                    buf.data = fn(buf)
            else:
                self._buffers[name] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        device, dtype = _parse_to(args, kwargs)

        def convert(t):
            target_dtype = dtype if (dtype is not None and t.is_floating_point()) else t.dtype
            target_device = device if device is not None else t.device
            return t.to(target_device, target_dtype)

        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda() if device is None else t.to(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floating(ember.float32)

    def double(self):
        return self._cast_floating(ember.float64)

    def half(self):
        return self._cast_floating(ember.float16)

    def bfloat16(self):
        return self._cast_floating(ember.bfloat16)

    # ---- state dict ---------------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # the old positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self.__dict__.get("_state_dict_pre_hooks", {}).values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self.__dict__.get("_state_dict_hooks", {}).values():
            result = hook(self, destination, prefix, local_metadata)
            if isinstance(result, dict):  # torch's older, private hooks may return a new dict
                destination = result
            elif result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, ember.Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected ember.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(input_param)}")
                continue
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                if local_metadata.get("assign_to_params_buffers", False):
                    # assign=True: the checkpoint's tensors become the module's, keeping requires_grad.
                    if name in self._parameters:
                        self._parameters[name] = Parameter(input_param, param.requires_grad)
                    else:
                        self._buffers[name] = input_param
                    continue
                with ember.no_grad():
                    param.copy_(input_param)
            except Exception as ex:  # report like torch, keep going
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.shape} and whose dimensions in the checkpoint are {input_param.shape}, "
                                  f"an exception occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if self._has_extra_state():
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key == extra_key and self._has_extra_state():
                    continue
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    # A dotted key must belong to a child module; a plain one to this module.
                    owner = self._modules if len(input_name) > 1 else local_state
                    if input_name[0] not in owner:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)  # per-module versions, when it has them
        state_dict = OrderedDict(state_dict)  # a copy: the modules' pre-hooks and loaders may edit it

        def load(module, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            for hook in module.__dict__.get("_load_state_dict_pre_hooks", {}).values():
                hook(module, state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs)
            module._load_from_state_dict(state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for module in self.modules():
            for hook in module.__dict__.get("_load_state_dict_post_hooks", {}).values():
                hook(module, incompatible)  # may edit the key lists, as in torch
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self._get_name(), "\n\t".join(error_msgs)))
        return incompatible

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before state_dict collects this module's entries."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) runs before this module's entries are loaded; it may edit state_dict."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) runs after state_dict collected this
        module's entries (and its children's)."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook  # torch's older, private names

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self.register_load_state_dict_pre_hook(lambda module, *args: hook(*args))

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict, before strict checking."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- hooks and calling --------------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:  # also called (with output None) when forward raises
            self.__dict__.setdefault("_forward_hooks_always_called", set()).add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> new grad_input or None, called when the gradients
        with respect to the module's tensor inputs are computed (see backward_hooks.py)."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> new grad_output or None, called before the module's gradients."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Deprecated in torch; ember gives it the full hook's semantics."""
        warnings.warn("register_backward_hook is deprecated; ember runs it as register_full_backward_hook",
                      FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)

    def compile(self, *args, **kwargs):
        """Accepted for torch's Module.compile(): ember has no graph compiler (see ember.compile)."""

    def to_empty(self, *, device=None, recurse=True):
        """Moves parameters and buffers to `device` without copying their values."""
        def fresh(t):
            return ember.empty(tuple(t.shape), dtype=t.dtype, device=t.device if device is None else device)
        return self._apply(fresh)

    def __call__(self, *args, **kwargs):
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_call = None
        if self.__dict__.get("_backward_hooks") or self.__dict__.get("_backward_pre_hooks"):
            backward_call = BackwardHookCall(self, self._backward_hooks.values(), self._backward_pre_hooks.values())
            args = backward_call.setup_inputs(args)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            self._call_always_called_hooks(args, kwargs)
            raise
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        if backward_call is not None:
            output = backward_call.setup_outputs(output)
        return output

    def _call_always_called_hooks(self, args, kwargs):
        """The forward hooks registered with always_call=True, after forward raised: each sees output
        None; an error in one is reported as a warning so that forward's own error propagates."""
        always = self.__dict__.get("_forward_hooks_always_called", ())
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id not in always:
                continue
            try:
                if hook_id in self._forward_hooks_with_kwargs:
                    hook(self, args, kwargs, None)
                else:
                    hook(self, args, None)
            except Exception as e:
                warnings.warn(f"forward hook with always_call=True raised an exception that was silenced, as "
                              f"another error was raised in forward: {e}")

    # ---- printing -----------------------------------------------------------------------------

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _add_indent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __deepcopy__(self, memo):
        # ember.Tensor has no __deepcopy__ of its own, so seed the memo with clones of the
        # buffers; Parameters copy themselves (Parameter.__deepcopy__).
        for module in self.modules():
            for buf in module._buffers.values():
                if buf is not None and id(buf) not in memo:
                    memo[id(buf)] = buf.detach().clone().requires_grad_(buf.requires_grad)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            object.__setattr__(new, key, copy.deepcopy(value, memo))
        return new


def _parse_to(args, kwargs):
    """(device, dtype) from Module.to's forms: to(device), to(dtype), to(tensor), to(device, dtype)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)  # accepted; layouts stay as they are (see ember/_memory_format.py)
    tensor = kwargs.pop("tensor", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {list(kwargs)}")
    for arg in args:
        if isinstance(arg, ember.Tensor):
            tensor = arg
        elif isinstance(arg, ember.dtype):
            dtype = arg
        elif isinstance(arg, (str, ember.device)):
            device = arg
        elif isinstance(arg, bool):
            pass  # non_blocking
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {type(arg).__name__}")
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    if dtype is not None and not (dtype.is_floating_point if hasattr(dtype, "is_floating_point") else True):
        raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
    return device, dtype
