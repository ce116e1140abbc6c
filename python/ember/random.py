"""ember.random: the global random number generators, as torch.random.

manual_seed / seed / initial_seed / get_rng_state / set_rng_state act on the
CPU's default generator (manual_seed and seed also seed the GPUs', as
ember.manual_seed does); fork_rng saves the CPU's and the GPUs' generator
states and puts them back when its block ends.
"""
import contextlib
import warnings

from ember import _C

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]

manual_seed = _C.manual_seed
seed = _C.seed
initial_seed = _C.initial_seed
get_rng_state = _C.get_rng_state
set_rng_state = _C.set_rng_state

_warned_many_devices = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Runs the block with the random number generators forked: whatever it
    draws or seeds, the CPU's generator and those of the CUDA `devices`
    (default: every visible GPU) have their previous states again after it.
    With enabled=False it does nothing."""
    from ember import cuda

    if not enabled:
        yield
        return
    if device_type != "cuda":
        raise ValueError(f"fork_rng: device_type must be 'cuda' (the only accelerator ember has), got {device_type!r}")
    if devices is None:
        count = cuda.device_count() if _C._cuda.is_available() else 0
        global _warned_many_devices
        if count > 1 and not _warned_many_devices:
            _warned_many_devices = True
            warnings.warn(f"ember.random.{_caller}: {count} CUDA devices are visible and all of their generators are "
                          f"forked, which may be slow; pass {_devices_kw}=[...] to fork only the ones you use.")
        devices = list(range(count))
    else:
        devices = [cuda._index(d) for d in devices]
    cpu_state = _C.get_rng_state()
    gpu_states = [(d, cuda.get_rng_state(d)) for d in devices]
    try:
        yield
    finally:
        _C.set_rng_state(cpu_state)
        for d, state in gpu_states:
            cuda.set_rng_state(state, d)
