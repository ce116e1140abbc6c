"""What the launcher (ember-run, torchrun) tells a worker, and which backends exist."""
import os

from ember import _C

_D = _C._distributed


def is_torchelastic_launched():
    """True in a worker started by ember-run or torchrun (both set TORCHELASTIC_RUN_ID)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank=None):
    """This worker's rank on its node (LOCAL_RANK), or fallback_rank when the launcher did not set it."""
    value = os.environ.get("LOCAL_RANK")
    if value is not None:
        return int(value)
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "get_node_local_rank to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    """Whether this build has `backend` ("gloo", "nccl"; others: False)."""
    name = str(backend).lower()
    if name == "gloo":
        return _D.gloo_available()
    if name == "nccl":
        return _D.nccl_available()
    return False


def get_default_backend_for_device(device):
    """'gloo' for "cpu", 'nccl' for "cuda", as torch.distributed."""
    kind = str(device).split(":")[0]
    if kind == "cpu":
        return "gloo"
    if kind == "cuda":
        return "nccl"
    raise ValueError(f"Default backend not registered for device : {device}")
