"""Test set-up shared by the CPU and GPU suites.

Without a CUDA device the portable kernels run on CPU tensors under the Triton interpreter. Triton reads
TRITON_INTERPRET when kernels are decorated, so it is set here, before warpgemm is imported.
"""
import os

import pytest
import torch

HAS_HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs an NVIDIA Hopper GPU (sm_90)")
    for item in items:
        if "gpu" in item.keywords and not HAS_HOPPER:
            item.add_marker(skip)


@pytest.fixture
def gen():
    """A fresh, seeded generator per test: random inputs, never zeros, reproducible failures."""
    g = torch.Generator(device="cuda" if HAS_HOPPER else "cpu")
    g.manual_seed(1234)
    return g
