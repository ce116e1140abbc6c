"""Writes torch_saved.pt, the PyTorch checkpoint test_torch_format.py loads without torch installed.
Run with PyTorch importable: python3 tests/python/data/make_torch_saved.py (torch 2.15 wrote the file)."""
import collections
import os

import numpy as np
import torch

state = collections.OrderedDict()
state["w"] = torch.arange(6.0).reshape(2, 3)
state["row"] = state["w"][1]  # a view: shares w's storage, offset 3
state["w_t"] = state["w"].t()  # a transposed view of the same storage
state["bf16"] = torch.tensor([1.5, -2.25, 3.0e38], dtype=torch.bfloat16)
state["f16"] = torch.tensor([0.5, -65504.0], dtype=torch.float16)
state["f64"] = torch.tensor([1.0 / 3.0], dtype=torch.float64)
state["i64"] = torch.tensor([-(2 ** 40), 7])
state["i8"] = torch.tensor([-128, 127], dtype=torch.int8)
state["u8"] = torch.tensor([0, 255], dtype=torch.uint8)
state["mask"] = torch.tensor([True, False, True])
state["param"] = torch.nn.Parameter(torch.tensor([0.25, -0.75]))
state["meta"] = {"epoch": 3, "lr": 0.1, "tags": ("a", None), "best": np.float64(2.5)}
torch.save(state, os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_saved.pt"))
