"""torch.distributed's exception classes. All are RuntimeErrors, so code that
catches RuntimeError around a collective keeps working."""


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """A collective failed in its backend (gloo, NCCL): a peer died, the group's timeout passed."""


class DistStoreError(DistError):
    """The rendezvous store failed or timed out."""


class DistNetworkError(DistError):
    """A network error (a peer could not be reached)."""


def as_dist_error(error, cls=DistBackendError):
    """`error` as `cls` when it is a plain RuntimeError (ember::Error); else unchanged, so
    ValueError, TypeError and NotImplementedError keep their types."""
    if type(error) is RuntimeError:
        new = cls(str(error))
        new.__cause__ = error
        return new
    return error
