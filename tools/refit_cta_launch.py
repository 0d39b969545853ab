#!/usr/bin/env python3
"""Fit and leave-one-GPU-out check of stream.c's CTA_LAUNCH_CYCLES on vLLM's fp8 quantise rows (data/kernels).

The constant bounds a streaming kernel by the rate the GPU launches CTAs: ceil(CTAs / SMs) launches per
SM, CTA_LAUNCH_CYCLES SM cycles each.  A model run without that bound (build with
-DCTA_LAUNCH_CYCLES=0, or an older binary) gives the per-line CSV this script reads
(`opmodel validate --data data/kernels/aic_quantize.jsonl --output-csv F`); with the bound the prediction
is max(old, fixed + launches x cycles / clock), so the fit and the held-out scores are exact.
Fit rows: the launch-bound ones (K <= 128, M >= 1024, working set <= 4 MB); the constant is the median
per-row value.  Standard library only.

Usage: python3 tools/refit_cta_launch.py CSV [--data data/kernels/aic_quantize.jsonl]
"""
import argparse
import csv
import json
import math
import statistics

# clock_hz, num_sms, the kernel fixed time (s) of the shipped entries (configs/hardware/*.yaml;
# the fixed time as `opmodel predict` reports it in diagnostics.overhead_s).
HW = {"h100_sxm": (1.98e9, 132, 1.5303030303e-06), "h200_sxm": (1.98e9, 132, 1.34343434343e-06),
      "l40s": (2.52e9, 142, 1.18253968254e-06)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--data", default="data/kernels/aic_quantize.jsonl")
    a = ap.parse_args()
    lines = open(a.data).read().splitlines()
    rows = []
    for r in csv.DictReader(open(a.csv)):
        op = json.loads(lines[int(r["line"]) - 1])["op"]
        m, k = op["shape"]
        rows.append((r["hardware"], m, k, float(r["measured_latency_s"]), float(r["predicted_latency_s"])))

    def per_row(hw, m, k, meas, pred):
        clk, sms, fixed = HW[hw]
        return (meas - fixed) * clk / math.ceil(m / sms)

    def fit(hws):
        v = [per_row(*r) for r in rows if r[0] in hws and r[2] <= 128 and r[1] >= 1024 and 3 * r[1] * r[2] <= 4e6]
        return statistics.median(v)

    def score(hw, c):
        clk, sms, fixed = HW[hw]
        e = [abs(max(p, fixed + math.ceil(m / sms) * c / clk) - t) / t for h, m, k, t, p in rows if h == hw]
        return 100 * sum(e) / len(e)

    allc = fit(HW)
    print("pooled fit: CTA_LAUNCH_CYCLES = %.0f" % allc)
    print("| held out | refit on the others | held-out MAPE % (before -> refit) | at the pooled value |")
    print("|---|---:|---:|---:|")
    for hw in HW:
        c = fit([h for h in HW if h != hw])
        print("| %s | %.0f | %.1f -> %.1f | %.1f |" % (hw, c, score(hw, 0), score(hw, c), score(hw, allc)))


if __name__ == "__main__":
    main()
