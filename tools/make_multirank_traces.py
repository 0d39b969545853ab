#!/usr/bin/env python3
"""Writes the hand-made 4-rank test set tests/data/traces/multirank/rank{0..3}.json.

No multi-rank trace set exists under ../shared (mi300_resnet_ckpt is rank 0 of
8 alone), so this one is built by hand, with the events, args and kernel names
torch.profiler and NCCL write (the record_param_comms args as in the ResNet
DDP trace; kernel names of NCCL 2.19+), and arrival times chosen so that every
figure of `opmodel trace report DIR` is known in advance:

  collective   bytes (bf16)     transfer   arrival offset per rank (us)   overlapped by compute
  allreduce    1048576 elems    60 us      0, 10, 50, 20                  [1320, 1400) on every rank
  allgather    262144 -> 1M     40 us      30, 0, 0, 5                    none
  reducescat.  1M -> 262144     45 us      0, 0, 0, 80                    none

Each rank's kernel of a collective starts when that rank arrives and ends when
the last one has arrived plus the transfer time (NCCL kernels wait inside).
Usage: tools/make_multirank_traces.py OUT_DIR
"""
import json
import os
import sys

RANKS = 4
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
COLLS = [  # name, c10d op, kernel, in, out, transfer us, arrival offsets, launch base us
    ("allreduce", "c10d::allreduce_", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     1048576, 1048576, 60, [0, 10, 50, 20], 1300),
    ("allgather", "c10d::_allgather_base_", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     262144, 1048576, 40, [30, 0, 0, 5], 1600),
    ("reduce_scatter", "c10d::_reduce_scatter_base_",
     "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     1048576, 262144, 45, [0, 0, 0, 80], 1900),
]


def rank_trace(r):
    pid, gpu_pid = 1000 + r, r
    ev = []
    corr = [100]

    def op(name, ts, dur, args=None):
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": 1, "ts": ts, "dur": dur,
                   "args": args or {}})

    def launch(ts, kname, kts, kdur, stream):
        corr[0] += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": 1, "ts": ts,
                   "dur": 4, "args": {"correlation": corr[0]}})
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": gpu_pid, "tid": stream, "ts": kts, "dur": kdur,
                   "args": {"correlation": corr[0], "stream": stream, "device": r}})

    mm = {"Input Dims": [[2048, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"],
          "Input Strides": [[1024, 1], [1024, 1]], "Concrete Inputs": ["", ""]}
    # Two GEMMs on the compute stream: one before the collectives, one that
    # runs while the all-reduce is in flight.
    op("aten::mm", 1000, 20, mm)
    launch(1005, GEMM, 1010, 200, 7)
    op("aten::mm", 1260, 20, mm)
    launch(1265, GEMM, 1320, 80, 7)
    for name, c10d, kernel, n_in, n_out, xfer, offs, base in COLLS:
        start = base + 10 + offs[r]
        end = base + 10 + max(offs) + xfer
        lts = base + offs[r]
        op(c10d, lts - 10, 40)
        op("record_param_comms", lts - 5, 30,
           {"Collective name": name, "dtype": "BFloat16", "In msg nelems": n_in, "Out msg nelems": n_out,
            "Group size": RANKS, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": r})
        launch(lts, kernel, start, end - start, 20)
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": r, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": r, "world_size": RANKS},
            "traceEvents": ev}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for r in range(RANKS):
        with open(os.path.join(out, f"rank{r}.json"), "w") as f:
            json.dump(rank_trace(r), f, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
