"""Gloo side of `kolo bench --compare` (torch.distributed, backend gloo, as Horovod/PyTorch use without MPI).

Times one collective per message size exactly as the Kolo worker does (same steps, same per-iteration
"slowest rank" timing) and prints one KOLO-BENCH-RESULT line per size from rank 0. Starts its own ranks.

usage: python3 gloo_bench.py NP PORT COLLECTIVE TORCH_DTYPE BYTES:ITERS:WARMUP[,...]
"""
import os
import sys
import time


def worker(rank, world, port, collective, dtype_name, steps):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            timeout=__import__("datetime").timedelta(seconds=120))
    dtype = getattr(torch, dtype_name)
    esize = torch.tensor([], dtype=dtype).element_size()
    for nbytes, iters, warmup in steps:
        count = nbytes // esize
        part = count // world
        a = torch.zeros(count, dtype=dtype)
        b = torch.zeros(count, dtype=dtype)
        if collective == "allreduce":
            op = lambda: dist.all_reduce(a)
        elif collective == "allgather":
            parts = list(b[:part * world].split(part))
            op = lambda: dist.all_gather(parts, a[:part])
        elif collective == "broadcast":
            op = lambda: dist.broadcast(a, 0)
        elif collective == "alltoall":
            op = lambda: dist.all_to_all_single(b[:part * world], a[:part * world])
        elif collective == "reducescatter":
            op = lambda: dist.reduce_scatter_tensor(b[:part], a[:part * world])
        else:
            raise SystemExit("gloo_bench: unknown collective " + collective)
        try:
            op()
        except (RuntimeError, AttributeError, ValueError) as e:
            # Not every collective/type exists in every torch build's gloo backend: say so, don't fail.
            if rank == 0:
                print("KOLO-BENCH-UNSUPPORTED gloo %s %s: %s" % (collective, dtype_name, str(e).splitlines()[0]),
                      flush=True)
            return
        times = torch.zeros(iters, dtype=torch.float64)
        for i in range(-warmup, iters):
            start = time.perf_counter()
            op()
            if i >= 0:
                times[i] = time.perf_counter() - start
        dist.all_reduce(times, op=dist.ReduceOp.MAX)
        if rank == 0:
            worst = sorted(times.tolist())
            n = len(worst)
            median = worst[n // 2] if n % 2 else (worst[n // 2 - 1] + worst[n // 2]) / 2
            print("KOLO-BENCH-RESULT bytes=%d iters=%d avg_us=%.3f min_us=%.3f median_us=%.3f max_us=%.3f"
                  % (nbytes, n, sum(worst) / n * 1e6, worst[0] * 1e6, median * 1e6, worst[-1] * 1e6), flush=True)
    dist.destroy_process_group()


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    world, port = int(sys.argv[1]), int(sys.argv[2])
    collective, dtype_name = sys.argv[3], sys.argv[4]
    steps = [tuple(int(x) for x in s.split(":")) for s in sys.argv[5].split(",")]
    import torch.multiprocessing as mp
    # spawn: each rank a fresh interpreter, like separate training processes.
    mp.start_processes(worker, args=(world, port, collective, dtype_name, steps), nprocs=world, join=True,
                       start_method="spawn")


if __name__ == "__main__":
    main()
