#!/usr/bin/env python3
"""Accuracy of extended_roofline's warp-level MMA rows by the CTAs per SM of the kernel it timed.

Reads a `validate-gemm-latency --output-csv` file (which has `extended_roofline_kernel` and
`extended_roofline_limiting_resource` per row) and, for the rows the model calls compute-bound on
a `tensorop_TMxTNxTK_sN[_splitkS]` kernel, counts the kernel's CTAs (batch · ⌈m/TM⌉ · ⌈n/TN⌉ · S)
over the hardware's SM count (`compute.num_sms` of configs/hardware/<hardware>.yaml) and prints
the geomean predicted/measured by (hardware, tile size, CTAs per SM). One 4-warp CTA per SM is one
warp per SM sub-partition: where that class alone is too fast on one GPU and right on another, the
SM's own issue limits differ (docs/gemm_models.md, "Known misses", A100). Eager rows and 8-bit
dtypes are left out. Standard library only.

Usage (from the repository root):
  build/src/cli/opmodel validate-gemm-latency --data-dir data/gemm_tc --no-calibrate-fixed-overhead \\
      --output-csv /tmp/tc.csv
  python3 tools/gemm_ctas_per_sm.py /tmp/tc.csv [--hardware a100_80gb_sxm l40s]
"""
import argparse
import collections
import csv
import math
import os
import re
import sys

KERNEL = re.compile(r"tensorop_(\d+)x(\d+)x(\d+)_s\d+(?:_splitk(\d+))?$")


def num_sms(hw, cache={}):
    if hw not in cache:
        path = os.path.join("configs", "hardware", hw + ".yaml")
        cache[hw] = None
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    m = re.match(r"\s+num_sms:\s*([0-9.eE+]+)", line)
                    if m:
                        cache[hw] = float(m.group(1))
                        break
    return cache[hw]


def bucket(per_sm):
    return "<= 1" if per_sm <= 1 else "1-2" if per_sm <= 2 else "2-4" if per_sm <= 4 else "> 4"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--hardware", nargs="*", help="only these hardware names")
    a = ap.parse_args()
    groups = collections.defaultdict(list)
    with open(a.csv, newline="") as f:
        for r in csv.DictReader(f):
            hw = r["hardware"]
            if a.hardware and hw not in a.hardware:
                continue
            if "eager" in r.get("group", "") or r["dtype"] not in ("bf16", "fp16"):
                continue
            if r.get("extended_roofline_limiting_resource") != "compute_roof_limited":
                continue
            m = KERNEL.match(r.get("extended_roofline_kernel", ""))
            sms = num_sms(hw)
            if not m or not sms:
                continue
            tm, tn, split = int(m.group(1)), int(m.group(2)), int(m.group(4) or 1)
            ctas = int(r["batch"]) * math.ceil(int(r["m"]) / tm) * math.ceil(int(r["n"]) / tn) * split
            size = ">= 256x128" if tm * tn >= 256 * 128 else "< 256x128"
            ratio = float(r["extended_roofline_us"]) / float(r["measured_us"])
            groups[(hw, size, bucket(ctas / sms))].append(ratio)
    if not groups:
        print("no compute-bound warp-level MMA rows", file=sys.stderr)
        return 1
    print("| hardware | tile | CTAs per SM | rows | geomean predicted/measured |")
    print("|---|---|---|---:|---:|")
    order = {"<= 1": 0, "1-2": 1, "2-4": 2, "> 4": 3}
    for k in sorted(groups, key=lambda k: (k[0], k[1], order[k[2]])):
        v = groups[k]
        print(f"| {k[0]} | {k[1]} | {k[2]} | {len(v)} | {math.exp(sum(map(math.log, v)) / len(v)):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
