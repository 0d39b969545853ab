#!/usr/bin/python3
"""artifact_kind_split.py — which kernel classes carry validate-artifact's device-bound misses
(docs/workload.md, "The A10's device side"):

    build/src/cli/opmodel validate-artifact --output-csv /tmp/art.csv > /dev/null
    /usr/bin/python3 tools/artifact_kind_split.py /tmp/art.csv

For the device-bound runs of each measurement file (host share < 0.1 at the default 21 us, as
tools/artifact_host_split.py bands them), each run's predicted device time is split into GEMM-like
kinds (gemm, batched_gemm, conv) and memory-bound kinds (elementwise, softmax, layernorm, rmsnorm,
embedding, reduction, copy, pooling) from `opmodel workload LIST --hardware H --clock-mhz AVG_FREQ
--format json` (by_kind, the implied kernels included).  The rest of the prediction (host gaps,
start-up, other kinds) is taken as predicted; the measured time less that rest is fitted as
a x GEMM + b x memory by least squares on relative errors, and 1/a, 1/b are printed: the factor by
which each class is predicted over (> 1) or under (< 1) what the runs imply.  The two classes are
correlated across runs (bigger models have more of both), so the factors are a reading aid with
wide error bars, not a calibration; nothing the prediction uses is computed here.
"""
import csv
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from artifact_host_split import BIN, host_share, list_path  # noqa: E402

GEMM = ("gemm", "batched_gemm", "conv")
MEM = ("elementwise", "softmax", "layernorm", "rmsnorm", "embedding", "reduction", "copy", "pooling")


def split(run):
    out = subprocess.check_output([BIN, "workload", list_path(run["workload"]), "--hardware", run["hardware"],
                                   "--clock-mhz", run["avg_freq_mhz"], "--format", "json"])
    g = m = 0.0
    for k in json.loads(out)["by_kind"]:
        if k["kind"] in GEMM:
            g += k["device_time_s"]
        elif k["kind"] in MEM:
            m += k["device_time_s"]
    return g, m


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: artifact_kind_split.py VALIDATE_ARTIFACT.csv")
    rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "scored" and list_path(r["workload"])]
    cache = {}
    print("%-26s %4s  %9s  %9s  %9s  %s" % ("file (device-bound runs)", "runs", "gemm p/m", "mem p/m",
                                             "mem share", "time ratio (geomean)"))
    for f in sorted({r["file"] for r in rows}):
        x, y, shares, ratios = [], [], [], []
        for r in rows:
            if r["file"] != f or host_share(cache, r) >= 0.1:
                continue
            g, m = split(r)
            pt, mt = float(r["uncalibrated_time_s"]), float(r["measured_time_s"])
            rest = pt - g - m
            x.append([g / mt, m / mt])
            y.append((mt - rest) / mt)
            shares.append(m / (g + m) if g + m > 0 else 0.0)
            ratios.append(pt / mt)
        if len(y) < 3:
            continue
        a, b = np.linalg.lstsq(np.array(x), np.array(y), rcond=None)[0]
        print("%-26s %4d  %9.3f  %9.3f  %9.2f  %.3f" % (f, len(y), 1 / a, 1 / b, float(np.mean(shares)),
                                                      float(np.exp(np.mean(np.log(ratios))))))


if __name__ == "__main__":
    main()
