#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Data-parallel training of a small CNN on Fashion-MNIST with PyTorch's
DistributedDataParallel: the script a user already has, with the backend
named on the command line ("nnp" reduces the gradients on the devices,
"gloo" on the host). With --fsdp (torch 2.x) the same model is
FullyShardedDataParallel's instead: each rank keeps a shard of the
parameters, gathers them for each pass and reduce-scatters the gradients.

Launch one process per device, e.g.
    torchrun --redirects 1 --tee 1 --nproc_per_node 4 train.py --backend nnp
    mpirun -np 4 train.py --backend nnp
Each rank trains on its own shard of the first --images training images;
every rank prints one JSON line at the end: its rank, the loss of every
step (the mean over all ranks, as every rank sees it), and the SHA-256 of
its parameters' bytes, so that a caller can check that the loss falls and
that every rank ends with the same model.
"""
import argparse
import gzip
import hashlib
import json
import os
import struct

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

DATA = "/usr/share/datasets/fashion-mnist"


def load_idx(name, count):
    """The first @count items of an IDX file of the data set, as a tensor."""
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        magic = struct.unpack(">I", f.read(4))[0]
        dims = [struct.unpack(">I", f.read(4))[0] for _ in range(magic & 0xFF)]
        dims[0] = min(dims[0], count)
        size = 1
        for d in dims:
            size *= d
        data = torch.frombuffer(bytearray(f.read(size)), dtype=torch.uint8)
    return data.reshape(dims)


class Net(nn.Module):
    """Two convolutions and two dense layers, the first @hidden wide:
    about 27,500 parameters at 64, 1.7 million (6.8 MB of gradients) at 4096."""

    def __init__(self, hidden=64):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def parameter_digest(model):
    h = hashlib.sha256()
    # A copy's bytes: numpy sharing a parameter's own storage would make it
    # unresizable, and FSDP frees its gathered parameters by resizing.
    for p in model.parameters():
        h.update(p.detach().clone().numpy().tobytes())
    return h.hexdigest()


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="nnp")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=32, help="per rank")
    ap.add_argument("--images", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--hidden", type=int, default=64, help="width of the first dense layer")
    ap.add_argument("--fsdp", action="store_true",
                    help="shard the model with FullyShardedDataParallel (torch 2.x)")
    return ap.parse_args(argv)


def env_from_mpirun():
    """Under Open MPI's mpirun, the job as torch's env:// reads it: RANK,
    WORLD_SIZE and LOCAL_RANK (the device) from mpirun's variables, and
    rank 0 on this host unless MASTER_ADDR says where (mpirun -x)."""
    for name, mpi in (("RANK", "OMPI_COMM_WORLD_RANK"),
                      ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                      ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")):
        if mpi in os.environ:
            os.environ.setdefault(name, os.environ[mpi])
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")


def shard_data(args, rank, size):
    """The first --images images, normalized, their labels, and the indices
    of this rank's shard of them."""
    images = load_idx("train-images-idx3-ubyte.gz", args.images)
    labels = load_idx("train-labels-idx1-ubyte.gz", args.images).long()
    images = images.float().div(255).sub(0.2860).div(0.3530).unsqueeze(1)
    return images, labels, torch.arange(rank, images.shape[0], size)


def wrap(net, fsdp, group=None):
    """@net data-parallel over @group (the default group if None): under
    FullyShardedDataParallel with @fsdp, else DistributedDataParallel."""
    if fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        return FSDP(net, process_group=group, device_id=torch.device("cpu"))
    return DDP(net, process_group=group)


def train_step(model, opt, data, step, batch, group=None):
    """Step @step of @batch images from this rank's shard: the loss's mean
    over the ranks of @group."""
    images, labels, shard = data
    at = (step * batch) % (shard.numel() - batch + 1)
    idx = shard[at:at + batch]
    opt.zero_grad()
    loss = F.cross_entropy(model(images[idx]), labels[idx])
    loss.backward()
    opt.step()
    mean = loss.detach().clone()
    dist.all_reduce(mean, group=group)
    return mean.item() / dist.get_world_size(group)


def train(args, after_step=None):
    """Train as one rank of the job the environment names (RANK,
    WORLD_SIZE, MASTER_ADDR, MASTER_PORT): what this rank saw, as a dict.
    after_step(step), if given, is called at the end of every step."""
    if args.backend == "nnp":
        import torch_nnp  # noqa: F401  registers the "nnp" backend
    dist.init_process_group(args.backend)
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    data = shard_data(args, rank, size)
    net = Net(args.hidden)
    grad_bytes = sum(p.numel() * p.element_size() for p in net.parameters())
    model = wrap(net, args.fsdp)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    losses = []
    for step in range(args.steps):
        losses.append(train_step(model, opt, data, step, args.batch))
        if after_step:
            after_step(step)
    if args.fsdp:  # every rank's digest of the whole model, not of its shard
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        with FSDP.summon_full_params(model):
            params = parameter_digest(model.module)
    else:
        params = parameter_digest(model.module)
    result = {"rank": rank, "losses": losses, "params": params, "grad_bytes": grad_bytes}
    dist.destroy_process_group()
    return result


if __name__ == "__main__":
    env_from_mpirun()
    print(json.dumps(train(parse())), flush=True)
