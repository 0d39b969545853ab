#!/usr/bin/env python3
"""How a timed call's overhead composes with the kernel: the evidence table behind
validate-gemm-latency's host overlap (docs/gemm_models.md, "The host overlap").

Reads the per-row CSV and the calibrated-parameters JSON of one validate-gemm-latency run made
with the overhead simply added, and prints, per group, the median of (measured - additive
overhead) for rows binned by the predicted kernel time (rounded to a power of two, in µs).  If the
overhead simply added, the median would track the bin; a flat start means part of the overhead
hides short kernels.  Standard library only.

Usage (from the repository root):
  build/src/cli/opmodel validate-gemm-latency --data-dir data --host-overlap 0 \\
      --output-csv /tmp/rows.csv --output-params /tmp/params.json
  python3 tools/gemm_floor_table.py /tmp/rows.csv /tmp/params.json [--model extended_roofline]
"""
import argparse
import collections
import csv
import json
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows_csv")
    ap.add_argument("params_json")
    ap.add_argument("--model", default="extended_roofline")
    ap.add_argument("--max-bin", type=int, default=7, help="largest kernel-time bin, log2 µs")
    a = ap.parse_args()

    params = json.load(open(a.params_json))
    overhead_us = {g["group"]: g["device_fixed_overhead_s"] * 1e6 for g in params["models"][a.model]}
    col = a.model + "_us"
    bins = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in csv.DictReader(open(a.rows_csv)):
        if r["calibration"] != "0" or not r[col]:
            continue
        g = r["group"]
        kernel_us = float(r[col]) - overhead_us[g]
        if kernel_us <= 0:
            continue
        b = round(math.log2(kernel_us))
        if b <= a.max_bin:
            bins[g][b].append(float(r["measured_us"]) - overhead_us[g])

    lo = min((b for g in bins for b in bins[g]), default=0)
    cols = list(range(max(lo, 0), a.max_bin + 1))
    print("median measured - additive overhead (µs), by predicted kernel time 2^b µs; rows in ()")
    print(f"{'group':34s} {'overhead':>8s} " + " ".join(f"{'b=' + str(b):>12s}" for b in cols))
    for g in sorted(bins):
        cells = []
        for b in cols:
            v = sorted(bins[g].get(b, []))
            cells.append(f"{v[len(v) // 2]:6.1f} ({len(v):4d})" if v else " " * 12)
        print(f"{g:34s} {overhead_us[g]:8.2f} " + " ".join(f"{c:>12s}" for c in cells))


if __name__ == "__main__":
    main()
