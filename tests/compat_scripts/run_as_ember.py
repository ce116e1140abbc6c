"""Runs an unchanged PyTorch script with `torch` meaning `ember`.

    python run_as_ember.py script.py [args...]
    python run_as_ember.py -m torch.distributed.run --nproc_per_node=2 script.py [args...]

`import torch`, `import torch.nn as nn`, `from torch.utils.data import X` all resolve
to the matching ember modules (torch.a.b -> ember.a.b) through a meta-path finder.
Processes the script spawns (multiprocessing spawn, subprocess python) must get the
alias too, so a throwaway directory holding a `torch` package that installs the
alias is put first on sys.path and PYTHONPATH.
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import tempfile


class _TorchAsEmber(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds torch[.x.y] by importing ember[.x.y] and handing that module out."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target_name = "ember" + fullname[len("torch"):]
        try:
            if importlib.util.find_spec(target_name) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module("ember" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass  # the ember module was executed by its own import


def install():
    """Makes `torch` mean `ember` in this process (idempotent)."""
    if not any(isinstance(f, _TorchAsEmber) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchAsEmber())
    sys.modules.pop("torch", None)  # a shim package imported first gives way to ember


def _make_child_shim():
    # Children re-import the script (spawn) or start fresh interpreters: a `torch`
    # package on their path that installs the alias and then becomes ember.
    shim = tempfile.mkdtemp(prefix="torch_as_ember_")
    os.mkdir(os.path.join(shim, "torch"))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(shim, "torch", "__init__.py"), "w") as f:
        f.write(f"import sys\nsys.path.insert(0, {here!r})\nimport run_as_ember\n"
                "run_as_ember.install()\nimport ember\nsys.modules['torch'] = ember\n")
    return shim


def main(argv):
    if not argv or argv[0] == "-m" and len(argv) < 2:
        sys.exit("usage: run_as_ember.py script.py [args...] | -m module [args...]")
    shim = _make_child_shim()
    sys.path.insert(0, shim)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [shim, os.environ.get("PYTHONPATH")]))
    install()
    if argv[0] == "-m":  # python -m torch.distributed.run ... runs ember's module of that name
        name = argv[1]
        if name == "torch" or name.startswith("torch."):
            name = "ember" + name[len("torch"):]
        sys.argv = [name] + list(argv[2:])
        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
