"""Every op-table row (the CASES of each test module) run through PyTorch too:
the row's lambdas are evaluated once with ember and once with the test
module's `ember` name bound to `torch`, and the results must agree in shape,
dtype and value. Rows whose lambdas use ember-only spellings are skipped.
Runs where PyTorch is importable (the GPU machines; any developer machine
with a torch wheel); skips otherwise."""
import glob
import importlib
import os

import numpy as np
import pytest

import ember
from harness import random_array

HERE = os.path.dirname(os.path.abspath(__file__))


def _tables():
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        name = os.path.basename(path)[:-3]
        if name == "test_torch_parity":
            continue
        module = importlib.import_module(name)
        if getattr(module, "CASES", None):
            yield module


def _numpy(t, torch):
    if isinstance(t, ember.Tensor):
        return (t.float() if t.dtype == ember.bfloat16 else t).detach().numpy()
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().numpy()


def test_op_tables_agree_with_pytorch():
    # Skipped inside the test, not at import: other tests import every test module.
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: no parity check against it")
    rng = np.random.default_rng(1)
    compared, mismatches = 0, []
    for module in _tables():
        for case in module.CASES:
            if case.extra.get("no_torch_parity"):  # a documented difference (the row says which)
                continue
            for shapes in case.shapes:
                for dtype in case.dtypes:
                    arrays = [random_array(s, dtype, case.domain, rng) for s in shapes]
                    try:
                        ours = case.ember_fn(*[ember.tensor(a.copy()) for a in arrays])
                    except Exception:  # the row's own tests cover ember's errors
                        continue
                    module.ember = torch
                    try:
                        theirs = case.ember_fn(*[torch.tensor(a.copy()) for a in arrays])
                    except Exception:  # an ember-only spelling in the lambda
                        continue
                    finally:
                        module.ember = ember
                    if not isinstance(ours, ember.Tensor) or not isinstance(theirs, torch.Tensor):
                        continue
                    a, b = _numpy(ours, torch), _numpy(theirs, torch)
                    compared += 1
                    if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(
                            a.astype(np.float64), b.astype(np.float64), rtol=1e-4, atol=1e-5, equal_nan=True):
                        mismatches.append(f"{module.__name__}::{case.name} {shapes} {np.dtype(dtype).name}: "
                                          f"ember {a.dtype}{list(a.shape)} vs torch {b.dtype}{list(b.shape)}")
    assert compared > 500, f"only {compared} rows could be compared: the check would prove little"
    assert not mismatches, "\n".join(mismatches)
