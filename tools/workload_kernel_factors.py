#!/usr/bin/python3
"""workload_kernel_factors.py — a diagnostic of validate-artifact's time error by kernel type
(docs/workload.md, "Results"): for the device-bound runs (predicted device time over 3x the host
floor at 32 us per kernel), a least-squares fit of measured time = a * (predicted time of the matrix
kernels: gemm, batched_gemm, conv) + b * (predicted time of the memory-bound kernels: elementwise,
softmax, layernorm), relative errors, per measurement set and per DVFS clock.  a and b say how far
each kernel type's prediction is from the runs; they are reported, never used by a prediction.

    build/src/cli/opmodel validate-artifact --output-csv /tmp/art.csv > /dev/null
    /usr/bin/python3 tools/workload_kernel_factors.py /tmp/art.csv [build/src/cli/opmodel] [data/energaizer]
"""
import collections
import csv
import json
import os
import re
import subprocess
import sys

import numpy as np

MATRIX = ("gemm", "batched_gemm", "conv")
MEMORY = ("elementwise", "softmax", "layernorm")


def kernel_list(data, run):
    key = re.sub(r"(_attn[a-z]+)?_freq\d+_iter\d+\.csv$", "", run["workload"])
    dirs = ["dvfs", "all"] if "dvfs" in run["file"] else ["all"]
    for d in dirs:
        for name in (key + ".json", key + "_freq%s.json" % run["clock_mhz"]):
            p = os.path.join(data, "workloads", d, name)
            if os.path.exists(p):
                return p
    return None


def main():
    csv_path = sys.argv[1]
    exe = sys.argv[2] if len(sys.argv) > 2 else "build/src/cli/opmodel"
    data = sys.argv[3] if len(sys.argv) > 3 else "data/energaizer"
    cache, sets = {}, collections.defaultdict(list)
    for r in csv.DictReader(open(csv_path)):
        if r["status"] not in ("scored", "calibration"):
            continue
        fn = kernel_list(data, r)
        key = (fn, r["hardware"], r["avg_freq_mhz"])
        if key not in cache:
            out = subprocess.run([exe, "workload", fn, "--hardware", r["hardware"], "--clock-mhz", r["avg_freq_mhz"],
                                  "--mode", "graph", "--format", "json"], capture_output=True, text=True, check=True)
            j = json.loads(out.stdout)
            per = {e["kind"]: e["device_time_s"] for e in j["by_kind"]}
            cache[key] = (sum(per.get(k, 0) for k in MATRIX), sum(per.get(k, 0) for k in MEMORY), j["kernels"])
        mat, mem, n = cache[key]
        if mat + mem <= 3 * n * 32e-6:
            continue
        vision = r["family"] in ("resnet101", "vitmodel", "mobilevitmodel")
        row = (mat, mem, float(r["measured_time_s"]))
        sets[(r["file"], "vision" if vision else "language")].append(row)
        if "dvfs" in r["file"]:
            sets[("dvfs", "%4s MHz" % r["clock_mhz"])].append(row)
    print("%-28s %-10s %4s %8s %8s %7s %7s %8s" % ("set", "models", "runs", "matrix", "memory", "mat%", "mem%", "fit MAPE"))
    for (name, what), rows in sorted(sets.items()):
        g = np.array([[a, b] for a, b, _ in rows])
        m = np.array([t for _, _, t in rows])
        if len(rows) < 2:
            continue
        coef = np.linalg.lstsq(g / m[:, None], np.ones(len(m)), rcond=None)[0]
        mape = 100 * np.mean(np.abs(g @ coef / m - 1))
        share = g.sum(0) / g.sum()
        print("%-28s %-10s %4d %8.2f %8.2f %6.0f%% %6.0f%% %7.1f%%" % (name, what, len(rows), coef[0], coef[1],
                                                                      100 * share[0], 100 * share[1], mape))


if __name__ == "__main__":
    main()
