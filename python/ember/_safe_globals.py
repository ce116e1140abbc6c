"""The classes and functions a user allows in weights_only=True loads (torch.serialization's
add_safe_globals / safe_globals / get_safe_globals / clear_safe_globals). ember.load's pickle
allowlist (python/ember/_torch_format.py) consults them after its own."""
import contextlib

_allowed = {}  # (module, qualified name) as a pickle names it -> the object


def _key(entry):
    """An object, or (object, "module.name") for an object pickled under another name."""
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError(f"add_safe_globals: expected an object or (object, 'module.name'), got {entry!r}")
        obj, name = entry
        module, _, qualname = name.rpartition(".")
        return (module, qualname), obj
    module, qualname = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not module or not qualname:
        raise TypeError(f"add_safe_globals: {entry!r} has no __module__ / __qualname__; pass (object, 'module.name')")
    return (module, qualname), entry


def add_safe_globals(safe_globals):
    """Allows these objects (classes, functions) in the pickles that weights_only=True loads."""
    for entry in safe_globals:
        key, obj = _key(entry)
        _allowed[key] = obj


def get_safe_globals():
    return list(_allowed.values())


def clear_safe_globals():
    _allowed.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """add_safe_globals for the duration of a with block."""
    saved = dict(_allowed)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _allowed.clear()
        _allowed.update(saved)


def lookup(module, name):
    """The allowed object pickled as module.name, or None."""
    return _allowed.get((module, name))
