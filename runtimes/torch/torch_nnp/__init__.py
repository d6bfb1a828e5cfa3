# SPDX-License-Identifier: MIT
"""The "nnp" torch.distributed backend (docs/torch.md).

    import torch.distributed as dist
    import torch_nnp  # registers "nnp"; torch 2.6 imports it by itself
    dist.init_process_group("nnp")

Each rank drives one nnp device: LOCAL_RANK (torchrun sets it) if set,
else the rank in the default group, modulo the devices this process sees.
"""
import os

import torch
import torch.distributed as dist

from . import _C

_TORCH_MAJOR = int(torch.__version__.split(".")[0])
device_counters = _C.device_counters

def device_for(rank):
    """The device index of the process whose rank in the default group is @rank."""
    local = os.environ.get("LOCAL_RANK")
    return (int(local) if local is not None else rank) % _C.device_count()


def abort(group=None):
    """Abort @group (the default group if None) at once, as NCCL's
    ncclCommAbort: its operations in flight fail on this rank and, told by
    the devices, on every other; every later call on it raises. The ranks
    go on in a new group (destroy_process_group(), then init_process_group()
    again). torch's own _abort_process_group() aborts NCCL's groups alone."""
    pg = group or dist.distributed_c10d._get_default_group()
    # Since torch 2.0 a group holds a backend per device type; before, it
    # was the backend itself.
    _C.abort(pg._get_backend(torch.device("cpu")) if _TORCH_MAJOR >= 2 else pg)


def _create(store, rank, size, timeout):
    # new_group calls this again with the rank in the new group: the
    # device still follows the rank in the default group.
    world_rank = dist.get_rank() if dist.is_initialized() else rank
    return _C.create_backend(store, rank, size, timeout, device_for(world_rank))


def _autoload():
    """torch's "torch.backends" entry point: torch 2.6 imports this package,
    so registering the backend, when it is itself imported."""


# Since torch 2.0 a backend names the device types it serves; nnp takes
# CPU tensors. torch 1.13 has no such argument.
if _TORCH_MAJOR >= 2:
    dist.Backend.register_backend("nnp", _create, devices=["cpu"])
else:
    dist.Backend.register_backend("nnp", _create)
