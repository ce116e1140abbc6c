"""Run an unchanged PyTorch script on ember: `python run_as_ember.py script.py [args...]`.

`torch` and every `torch.<sub>` module resolve to `ember` / `ember.<sub>`, so
`import torch.nn as nn` and `from torch.utils.data import DataLoader` work
while the script file itself stays pure PyTorch.
"""
import importlib
import importlib.abc
import importlib.util
import runpy
import sys


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `torch[.x.y]` with the already imported module `ember[.x.y]`."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch" and not name.startswith("torch."):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        # The ember module itself becomes sys.modules["torch..."]: one object, two names.
        module = importlib.import_module("ember" + spec.name[len("torch"):])
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # Already executed under its ember name; the import system replaced
        # __spec__ with the torch one, give ember's back.
        module.__spec__ = self._own_spec


def install():
    sys.meta_path.insert(0, _TorchAlias())


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: run_as_ember.py script.py [args...]")
    install()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
