# SPDX-License-Identifier: MIT
"""The "nnp" torch.distributed backend (docs/torch.md).

    import torch.distributed as dist
    import torch_nnp  # registers "nnp"
    dist.init_process_group("nnp")

Each rank drives one nnp device: LOCAL_RANK (torchrun sets it) if set,
else the rank in the default group, modulo the devices this process sees.
"""
import os

import torch.distributed as dist

from . import _C

device_counters = _C.device_counters

def device_for(rank):
    """The device index of the process whose rank in the default group is @rank."""
    local = os.environ.get("LOCAL_RANK")
    return (int(local) if local is not None else rank) % _C.device_count()


def _create(store, rank, size, timeout):
    # new_group calls this again with the rank in the new group: the
    # device still follows the rank in the default group.
    world_rank = dist.get_rank() if dist.is_initialized() else rank
    return _C.create_process_group(store, rank, size, timeout, device_for(world_rank))


dist.Backend.register_backend("nnp", _create)
