"""ember.utils.hooks: RemovableHandle, the handle register_*_hook returns
(the one ember.nn.Module uses), for code that keeps its own hook registry:
``handle = RemovableHandle(hooks); hooks[handle.id] = fn; ...; handle.remove()``."""
from ember.nn.modules.module import RemovableHandle  # noqa: F401

__all__ = ["RemovableHandle", "unserializable_hook"]


def unserializable_hook(f):
    """Marks hook f as one that cannot be saved with its tensor (as torch); returns f."""
    f.__torch_unserializable__ = True
    return f
