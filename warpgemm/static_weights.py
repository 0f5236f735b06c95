"""Static weights: the caller's promise that lets a decode GEMM start reading its weight before the kernel launched
before it has finished.

warpgemm's weight-streaming (swap-AB) launches use programmatic dependent launch: their programs start while the
previous kernel on the stream drains, and wait for it (griddepcontrol.wait) before touching memory, since that
kernel may be writing x. A weight that no kernel still running can write need not wait: with the promise, each
program loads its first ring-full of weight boxes into shared memory before the wait, so the HBM stays busy across
the gap between two kernels (kernels/hopper/partitions.py, tma_producer). A given tile gives bitwise the same results
either way; one or two rows of x may move from a GEMV to those tiles, which sum in another order. Measured on an
H100, back to back in CUDA graphs on cold weights: `bench decode` 1.077x -> 1.113x F.linear (notes/perf.md,
session 30).

The promise, per tensor (its storage, through any view of it): **no GPU kernel that may still be running when a
warpgemm call starts writes it, and its last writes are visible by then.** Only the wait on the prior grid
guarantees visibility, so after writing a marked tensor (loading weights, load_state_dict, copy_, an optimizer step)
synchronize the stream before the next warpgemm call reads it, or unmark it while writing. A kernel that releases
its successor early (programmatic dependent launch) may still be running several launches later: warpgemm's own
kernels release theirs at entry, which is why warpgemm refuses to write a marked tensor (`out=`); other libraries'
kernels may too. Breaking the promise makes the product read stale weights. `WARPGEMM_STATIC_WEIGHTS=0` ignores
every mark.

A mark belongs to the tensor object in this process: a copy (copy.deepcopy, torch.save then torch.load, .clone(),
module.to(...) that makes new tensors) is not marked. The promise is about what runs on the GPU while this process
calls warpgemm, so it is made again for the tensors that process holds: mark after loading.
"""
from __future__ import annotations

import weakref

import torch

from . import _env

ATTR = "_warpgemm_static"
_any_marked = False  # until the first mark, is_static answers without looking at the tensor (every call asks)
# Marked tensors by id (a WeakSet would compare tensors with ==): (tensor, the storage it had when marked), weakly.
# The registry, not an attribute on the tensor, holds the mark: an attribute would travel with torch.save (a
# Parameter's __dict__ is pickled) but not with copy.deepcopy, and a loaded one would miss the storage's record.
_marked: dict = {}

# Each storage of a marked tensor carries {id: weakref} of the marked tensors on it (attribute ATTR). PyTorch keeps
# one Python object per storage, shared by every alias (views, .detach(), .data), so writes_static finds a write
# through any alias in one lookup: it runs on every out= call, where a scan of a model's marked parameters cost
# ~0.3 us each (95 us for 300).


def _record(t: torch.Tensor) -> None:
    storage = t.untyped_storage()
    marks = getattr(storage, ATTR, None)
    if marks is None:
        marks = {}
        setattr(storage, ATTR, marks)
    key = id(t)

    def gone(ref):  # a collected tensor leaves the registry (unless its id was marked again since)
        entry = _marked.get(key)
        if entry is not None and entry[0] is ref:
            del _marked[key]

    ref = weakref.ref(t, gone)
    marks[key] = ref
    _marked[key] = (ref, weakref.ref(storage))


def _forget(t: torch.Tensor) -> None:
    entry = _marked.pop(id(t), None)
    storages = [t.untyped_storage()] + ([entry[1]()] if entry is not None else [])
    for storage in storages:
        if storage is not None:
            getattr(storage, ATTR, {}).pop(id(t), None)


def _is_marked(t) -> bool:
    entry = _marked.get(id(t))
    return entry is not None and entry[0]() is t  # (an id is reused once its tensor is gone)


def mark_static(obj, static: bool = True):
    """Mark a tensor, or every parameter of an nn.Module, as a static weight (see the module docstring for the
    promise this makes); `static=False` removes the mark. Returns obj. Mark the tensor that owns the storage (a
    Parameter): every view of it counts as marked, while marking a view marks that view object only.

        model = warpgemm.mark_static(model.eval())      # inference: no kernel writes the weights during a step
    """
    if isinstance(obj, torch.nn.Module):
        for p in obj.parameters():
            mark_static(p, static)
        return obj
    if not isinstance(obj, torch.Tensor):
        raise TypeError(f"mark_static takes a tensor or an nn.Module, got {type(obj).__name__}")
    if static:
        global _any_marked
        _any_marked = True
        _forget(obj)  # marked again (its storage may have been replaced since: p.data = ...)
        _record(obj)
        return obj
    _forget(obj)
    if is_static(obj):
        raise ValueError("mark_static(t, False): t is a view of a marked tensor, whose mark covers every view; "
                         "unmark the tensor that owns the storage (t._base)")
    return obj


def is_static(t: torch.Tensor) -> bool:
    """Whether warpgemm may read `t` before the previous kernel on the stream has finished: `t` or the tensor
    owning its storage (its view base) is marked, and WARPGEMM_STATIC_WEIGHTS is not 0."""
    if not (_any_marked and _env.STATIC_WEIGHTS):
        return False
    if _is_marked(t):
        return True
    base = t._base
    return base is not None and _is_marked(base)


def writes_static(out: torch.Tensor) -> bool:
    """Whether writing `out` would write a marked tensor's storage through any alias (a view, .detach(), .data).
    The storage is the one the tensor had when marked: mark a tensor again after replacing its storage
    (p.data = ..., module.to(...))."""
    if not (_any_marked and _env.STATIC_WEIGHTS) or torch.compiler.is_compiling():
        return False  # traced: fake tensors carry no marks, and the out= op checks again when it runs (library.py)
    if is_static(out):
        return True
    storage = out.untyped_storage()
    for ref in getattr(storage, ATTR, {}).values():
        m = ref()
        # Still marked and still on this storage (not given another since: p.data = ...).
        if m is not None and _is_marked(m) and m.untyped_storage() is storage:
            return True
    return False
