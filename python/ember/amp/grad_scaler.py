"""ember.amp.GradScaler: dynamic loss scaling for float16 training (torch.amp.GradScaler).

scale(loss) multiplies the loss by the scale before backward; step(optimizer)
unscales the gradients (one C++ multi-tensor op per device and dtype that also
looks for inf/NaN), and skips optimizer.step() when it found any; update()
backs the scale off after such a step and grows it after growth_interval
clean steps.
"""
import warnings
from collections import abc, defaultdict
from enum import Enum

import ember
from ember import _C

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not ember.cuda.is_available():
            warnings.warn("ember.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # a float32 0-d tensor on the device of the first scaled output
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None  # int32 0-d tensor: clean steps since the last change
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None or self._growth_tracker is None:
            raise RuntimeError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = ember.full((), self._init_scale, dtype=ember.float32, device=dev)
        self._growth_tracker = ember.full((), self._init_growth_tracker, dtype=ember.int32, device=dev)

    def scale(self, outputs):
        """Multiplies a tensor (or a nest of lists/tuples of tensors) by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, ember.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(outputs.device)

        def apply_scale(val):
            if isinstance(val, ember.Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        # One multi-tensor call per (device, dtype); found_inf per device.
        per_device_and_dtype = defaultdict(lambda: defaultdict(list))
        with ember.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == ember.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    per_device_and_dtype[str(grad.device)][grad.dtype].append(grad)
            found_per_device = {}
            for dev, per_dtype in per_device_and_dtype.items():
                found = found_inf.clone() if str(found_inf.device) == dev else found_inf.to(dev)
                inv = inv_scale.to(dev)
                for grads in per_dtype.values():
                    _C._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
                found_per_device[dev] = found
        return found_per_device

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale, in place (e.g. before clipping)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in double, as torch does, then float32.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember.full((), 0.0, dtype=ember.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless unscale_ was called) and steps, unless a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise RuntimeError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Updates the scale after the iteration's steps (or sets it to new_scale)."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, (float, int)) and not isinstance(new_scale, bool):
                scale.fill_(float(new_scale))
            else:
                reason = "new_scale should be a float or a 1-element ember Tensor with requires_grad=False."
                if not isinstance(new_scale, ember.Tensor) or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [f.to(scale.device) for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise RuntimeError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for f in found_infs[1:]:
                found_inf_combined = found_inf_combined + f
            _C._amp_update_scale_(scale, growth_tracker, found_inf_combined, self._growth_factor,
                                  self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise RuntimeError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                   "or at the end after scaler.update().")
            # Tensors do not travel in a pickle: keep their values.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)
