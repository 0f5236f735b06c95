"""Test set-up shared by the CPU and GPU suites.

Without a CUDA device the portable kernels run on CPU tensors under the Triton interpreter. Triton reads
TRITON_INTERPRET when kernels are decorated, so it is set here, before warpgemm is imported.
"""
import os
import tempfile

import pytest
import torch

# Tests never read or write the user's tuning cache: a tuned winner there would change which kernels they run.
os.environ["WARPGEMM_CACHE_DIR"] = tempfile.mkdtemp(prefix="warpgemm-test-cache-")
os.environ.pop("WARPGEMM_TUNE", None)

HAS_HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs an NVIDIA Hopper GPU (sm_90)")
    for item in items:
        if "gpu" in item.keywords and not HAS_HOPPER:
            item.add_marker(skip)
    # The sm_90 compile checks run first, whatever order the files are given in: the interpreter patches
    # triton.language's tensor operators in place for the whole process the first time it runs a kernel, and no
    # Gluon kernel compiles after that (AttributeError: 'block_argument' object has no attribute 'dtype').
    # Compile checks in other files carry the sm90_compile marker.
    items.sort(key=lambda item: 0 if item.module.__name__.endswith("test_compile_sm90")
               or "sm90_compile" in item.keywords else 1)


@pytest.fixture
def gen():
    """A fresh, seeded generator per test: random inputs, never zeros, reproducible failures."""
    g = torch.Generator(device="cuda" if HAS_HOPPER else "cpu")
    g.manual_seed(1234)
    return g


@pytest.fixture
def tuning_cache(tmp_path, monkeypatch):
    """A private tuning-cache directory in 'use' mode, nothing loaded or failed before or after (tests/*tuning*)."""
    from warpgemm import tuning

    monkeypatch.setenv("WARPGEMM_CACHE_DIR", str(tmp_path))
    old = tuning.mode()
    tuning.set_mode("use")
    tuning.forget_loaded()
    tuning._failed.clear()
    yield tmp_path
    tuning.set_mode(old)
    tuning.forget_loaded()
    tuning._failed.clear()
