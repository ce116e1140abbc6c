"""nn.DataParallel for what one ember process can run: the CPU or one GPU.

It wraps the module (so state_dict keys gain the `module.` prefix, as torch's),
moves the inputs to its device and passes them through. Splitting a batch over
several GPUs in one process (torch's replicate/scatter/gather) is not
implemented: DistributedDataParallel with ember-run (one process per GPU) does
that job, and is what torch recommends too.
"""
import warnings

import ember
from ember.nn.modules.module import Module

_USE_DDP = ("DataParallel over several GPUs is not implemented in ember: use "
            "ember.nn.parallel.DistributedDataParallel with one process per GPU, started with "
            "`ember-run --nproc-per-node N script.py` (as torch recommends over DataParallel)")


def _device_index(d):
    """The CUDA index of a device_ids entry: an int, 'cuda:N' or an ember.device."""
    if isinstance(d, int):
        return d
    d = ember.device(d) if isinstance(d, str) else d
    if getattr(d, "type", None) != "cuda":
        raise ValueError(f"DataParallel: device_ids must be CUDA devices, got {d}")
    return 0 if d.index is None else d.index


def _to(obj, device):
    """Every tensor in obj (nested tuples, lists, dicts) moved to `device`."""
    if isinstance(obj, ember.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # named tuple
        return type(obj)(*(_to(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """Runs `module` on one device (the CPU when CUDA is unavailable); several device_ids raise
    NotImplementedError pointing to DistributedDataParallel."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        if device_ids is not None and len(device_ids) > 1:  # refused on any machine, so a script learns early
            raise NotImplementedError(_USE_DDP)
        if not ember.cuda.is_available():
            self.device_ids = []
            self.output_device = None
            self.src_device_obj = None
            return
        if device_ids is None:
            if ember.cuda.device_count() > 1:
                warnings.warn("DataParallel in ember runs on one GPU (the current one); " + _USE_DDP, UserWarning,
                              stacklevel=2)
            device_ids = [ember.cuda.current_device()]
        device_ids = [_device_index(d) for d in device_ids]
        if not device_ids:
            raise ValueError("DataParallel: device_ids must not be empty")
        self.device_ids = device_ids
        self.output_device = _device_index(output_device) if output_device is not None else device_ids[0]
        self.src_device_obj = ember.device(f"cuda:{device_ids[0]}")

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        out = self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
        if self.output_device != self.device_ids[0]:
            out = _to(out, ember.device(f"cuda:{self.output_device}"))
        return out


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """module(*inputs) through DataParallel (torch.nn.parallel.data_parallel), for one device."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
