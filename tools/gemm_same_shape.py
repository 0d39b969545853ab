#!/usr/bin/env python3
"""Measured time of the same GEMM shape in two curated sets (contract section 4 CSVs), side by side.

Two harnesses that timed the same (batch, m, n, k) on the same GPU separate what the hardware does
from what the software stack chose: where they agree, the model's hardware figures are tested;
where they differ, a library (release, heuristics, tile schedule) differs, which no hardware
figure can fix. Rows are matched on (batch, m, n, k, transpose_a, transpose_b); a shape present
several times in a file takes the median of its times. Prints the ratio B / A (median, geomean,
5th and 95th percentile) by m bucket, and with --rows every matched shape. Standard library only.

Usage (from the repository root):
  python3 tools/gemm_same_shape.py data/gemm_tc/aiconfigurator_h100_sxm_bf16.csv \\
      data/gemm_tc/vidur_h100_sxm_fp16.csv [--rows]
"""
import argparse
import collections
import csv
import math
import statistics
import sys

M_BUCKETS = [(1, 16), (17, 64), (65, 256), (257, 512), (513, 1024), (1025, 2048), (2049, 4096),
             (4097, 1 << 62)]


def load(path):
    times = collections.defaultdict(list)
    hw = set()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = tuple(int(r[c]) for c in ("batch", "m", "n", "k", "transpose_a", "transpose_b"))
            times[key].append(float(r["latency_us"]))
            hw.add(r["hardware"] + " " + r["dtype"])
    return {k: statistics.median(v) for k, v in times.items()}, sorted(hw)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(math.ceil(q * len(xs))) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rows", action="store_true", help="also print every matched shape")
    a = ap.parse_args()
    ta, hwa = load(a.a)
    tb, hwb = load(a.b)
    common = sorted(set(ta) & set(tb), key=lambda k: (k[1], k[2], k[3], k[0]))
    if not common:
        sys.exit("no shape in common")
    print("A: %s (%s)\nB: %s (%s)\n%d shapes in common; ratio = B time / A time" %
          (a.a, ", ".join(hwa), a.b, ", ".join(hwb), len(common)))
    print("| m | shapes | median | geomean | p5 | p95 |")
    print("|---|---:|---:|---:|---:|---:|")
    for lo, hi in M_BUCKETS + [(1, 1 << 62)]:
        rs = [tb[k] / ta[k] for k in common if lo <= k[1] <= hi]
        if not rs:
            continue
        label = "all" if (lo, hi) == (1, 1 << 62) else ("%d-%d" % (lo, hi) if hi < 1 << 62 else "> %d" % (lo - 1))
        gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f |" %
              (label, len(rs), statistics.median(rs), gm, pct(rs, 0.05), pct(rs, 0.95)))
    if a.rows:
        print("\n| batch | m | n | k | A us | B us | B/A | A TFLOP/s | B TFLOP/s |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k in common:
            fl = 2.0 * k[0] * k[1] * k[2] * k[3]
            print("| %d | %d | %d | %d | %.2f | %.2f | %.2f | %.0f | %.0f |" %
                  (k[0], k[1], k[2], k[3], ta[k], tb[k], tb[k] / ta[k], fl / ta[k] / 1e6, fl / tb[k] / 1e6))


if __name__ == "__main__":
    main()
