"""PyTorch DDP side of `kolo run --example synthetic -- --compare`.

Trains the synthetic benchmark's model with torch.nn.parallel.DistributedDataParallel (backend gloo, CPU) at
np=1 (rank 0 alone, DDP over a one-rank group: the analogue of Kolo's one-rank communicator) and at np=NP,
taking turns with the Kolo ranks through files in GATE: it runs turn k when GATE/go-k appears and answers with
GATE/done-k (turn 0 is the warm-up). GATE/stop ends it. Starts its own ranks; rank 0 writes GATE/ready with the
model's trainable parameter count and shapes, so the Java side can check both sides train the same network.

usage: python3 ddp_synthetic.py GATE PORT NP MODEL BATCH IMAGE_SIZE WARMUP BATCHES_PER_ITER ITERS THREADS TIMEOUT_S
       KOLO_PID
(KOLO_PID: the process that started it; the ranks stop when it is gone, 0 = never)
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


class BasicBlock(nn.Module):
    """ResNet.java's residual(): conv3x3(stride)-BN-ReLU-conv3x3-BN, plus a 1x1(stride)-BN projection
    when the shape changes, added, then ReLU. Convolutions have no bias, as in ResNet.java's conv()."""

    def __init__(self, cin, cout, stride, project):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False),
                                      nn.BatchNorm2d(cout)) if project else nn.Identity()

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


def resnet(layers, image_size, classes):
    """ResNet.java's build(): the CIFAR stem (3x3 convolution, no pooling) up to 64 pixels, else the ImageNet stem."""
    blocks = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3]}[layers]
    if image_size <= 64:
        mods = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    else:
        mods = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for b in range(blocks[stage]):
            first = stage > 0 and b == 0
            mods.append(BasicBlock(cin, cout, 2 if first else 1, first))
            cin = cout
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*mods)


def build(model, image_size):
    """SyntheticModels.block() layer for layer."""
    if model == "mlp":
        return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 2048), nn.ReLU(),
                             nn.Linear(2048, 1000))
    if model == "mlp-deep":
        mods, cin = [], 1024
        for _ in range(32):
            mods += [nn.Linear(cin, 256), nn.ReLU()]
            cin = 256
        return nn.Sequential(*mods, nn.Linear(256, 1000))
    if model in ("resnet18", "resnet34"):
        return resnet(int(model[len("resnet"):]), image_size, 1000)
    raise SystemExit("ddp_synthetic: unknown model " + model)


def write(path, text):
    # Written whole, then renamed: the Java side never reads half a file.
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def alive(pid):
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def wait_for(gate, name, timeout_s, kolo_pid):
    """Polls for GATE/name; False when GATE/stop appears. Sleeping, not spinning: the Kolo ranks run meanwhile."""
    deadline = time.monotonic() + timeout_s
    polls = 0
    while time.monotonic() < deadline:
        if os.path.exists(os.path.join(gate, name)):
            return True
        if os.path.exists(os.path.join(gate, "stop")):
            return False
        polls += 1
        if polls % 200 == 0 and not alive(kolo_pid):
            raise SystemExit("ddp_synthetic: the Kolo rank that started it (pid %d) is gone" % kolo_pid)
        time.sleep(0.005)
    raise SystemExit("ddp_synthetic: no %s in %s within %d s (the Kolo job is gone?)" % (name, gate, timeout_s))


class Timed:
    """One DDP model with its optimizer; step() trains one batch and adds its phases' times."""

    def __init__(self, model, group):
        self.ddp = nn.parallel.DistributedDataParallel(model, process_group=group)
        self.opt = torch.optim.SGD(self.ddp.parameters(), lr=0.01)
        self.loss = nn.CrossEntropyLoss()
        self.forward_s = self.backward_s = self.step_s = 0.0
        self.steps = 0

    def step(self, x, y):
        t0 = time.perf_counter()
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss(self.ddp(x), y)
        t1 = time.perf_counter()
        # DDP's gradient allreduce runs inside backward(), bucket by bucket as gradients become ready.
        loss.backward()
        t2 = time.perf_counter()
        self.opt.step()
        t3 = time.perf_counter()
        self.forward_s += t1 - t0
        self.backward_s += t2 - t1
        self.step_s += t3 - t2
        self.steps += 1

    def phases_ms(self):
        n = max(1, self.steps)
        return self.forward_s / n * 1e3, self.backward_s / n * 1e3, self.step_s / n * 1e3

    def reset(self):
        self.forward_s = self.backward_s = self.step_s = 0.0
        self.steps = 0


def worker(rank, gate, port, world, model_name, batch, image_size, warmup, per_iter, iters, threads, timeout_s,
           kolo_pid):
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    import datetime
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))
    alone = dist.new_group(ranks=[0])  # collective: every rank must create it
    torch.manual_seed(42)
    image = model_name.startswith("resnet")
    shape = (batch, 3, image_size, image_size) if image else (batch, 1024)
    x = torch.rand(shape)
    y = torch.randint(0, 1000, (batch,))
    distributed = Timed(build(model_name, image_size), None)
    baseline = Timed(build(model_name, image_size), alone) if rank == 0 else None
    dist.barrier()
    if rank == 0:
        params = [p for p in distributed.ddp.module.parameters() if p.requires_grad]
        write(os.path.join(gate, "ready"), "params=%d shapes=%s torch=%s\n" % (
            sum(p.numel() for p in params), ",".join("x".join(str(d) for d in p.shape) for p in params),
            torch.__version__))
    for turn in range(iters + 1):
        if not wait_for(gate, "go-%d" % turn, timeout_s, kolo_pid):
            break
        batches = warmup if turn == 0 else per_iter
        for m in (baseline, distributed):
            if m is not None:
                m.reset()
        base_rate = 0.0
        if baseline is not None:
            start = time.perf_counter()
            for _ in range(batches):
                baseline.step(x, y)
            base_rate = batch * batches / max(time.perf_counter() - start, 1e-9)
        dist.barrier()  # the other ranks idle while rank 0 trains alone, as Kolo's baseline has them
        start = time.perf_counter()
        for _ in range(batches):
            distributed.step(x, y)
        rate = torch.tensor([batch * batches / max(time.perf_counter() - start, 1e-9)], dtype=torch.float64)
        dist.all_reduce(rate)  # after the clock stopped: the total of every rank's img/sec
        if rank == 0:
            f, b, s = distributed.phases_ms()
            f1, b1, s1 = baseline.phases_ms()
            write(os.path.join(gate, "done-%d" % turn),
                  "np1=%.4f total=%.4f forward_ms=%.2f backward_ms=%.2f step_ms=%.2f"
                  " np1_forward_ms=%.2f np1_backward_ms=%.2f np1_step_ms=%.2f\n"
                  % (base_rate, rate.item(), f, b, s, f1, b1, s1))
    dist.destroy_process_group()


def main():
    if len(sys.argv) != 13:
        raise SystemExit(__doc__)
    gate = sys.argv[1]
    port, world = int(sys.argv[2]), int(sys.argv[3])
    model_name = sys.argv[4]
    batch, image_size, warmup, per_iter, iters, threads, timeout_s, kolo_pid = (int(v) for v in sys.argv[5:13])
    # Forked from Kolo's rank 0, the ranks would inherit its CPU binding (KOLO_BIND_TO); DDP's ranks get the
    # whole machine, as Kolo's ranks have by default.
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, range(os.cpu_count()))
        except OSError:
            pass
    # spawn: each rank a fresh interpreter, like separate training processes.
    mp.start_processes(worker, args=(gate, port, world, model_name, batch, image_size, warmup, per_iter, iters,
                                     threads, timeout_s, kolo_pid), nprocs=world, join=True, start_method="spawn")


if __name__ == "__main__":
    main()
