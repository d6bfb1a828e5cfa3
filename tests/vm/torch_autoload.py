# SPDX-License-Identifier: MIT
"""torch 2.6's backend autoloading (torch_nnp.sh): after a plain
`import torch`, torch has imported torch_nnp itself (its "torch.backends"
entry point) and init_process_group("nnp") works. One rank of a job of
`mpirun -np N`; rank r adds r + 1 everywhere, so every rank must end with
N(N + 1)/2. With TORCH_DEVICE_BACKEND_AUTOLOAD=0 torch imports nothing,
and this says so and stops.
"""
import os
import sys

import torch
import torch.distributed as dist

rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
print(f"AUTOLOAD rank {rank}: torch imported torch_nnp: {'torch_nnp' in sys.modules}", flush=True)
if "torch_nnp" not in sys.modules:
    sys.exit(0)
dist.init_process_group("nnp", init_method="tcp://127.0.0.1:29517", rank=rank, world_size=world)
t = torch.full((4,), float(rank + 1))
dist.all_reduce(t)
print(f"AUTOLOAD rank {rank}: {dist.get_backend()} allreduce {t.tolist()}", flush=True)
dist.destroy_process_group()
