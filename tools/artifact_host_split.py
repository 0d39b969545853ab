#!/usr/bin/python3
"""artifact_host_split.py — validate-artifact's uncalibrated scores split by how host-bound each run
is predicted to be (docs/workload.md, "Now: with the harness start-up"):

    build/src/cli/opmodel validate-artifact --output-csv /tmp/art.csv > /dev/null
    build/src/cli/opmodel validate-artifact --no-harness-startup --output-csv /tmp/art0.csv > /dev/null
    /usr/bin/python3 tools/artifact_host_split.py /tmp/art.csv [/tmp/art0.csv]

A run's host share is the part of its predicted eager time that is host gaps at the default host's
interval: (kernels shorter than the interval) x interval / predicted time, from `opmodel workload
KERNEL_LIST --hardware H --clock-mhz AVG_FREQ --launch-interval-us 21 --format json` (its by_op),
the kernel list found by the artifact's naming rule in data/energaizer/workloads/all (the dvfs
lists are byte-identical copies).  Prints, per measurement file and host-share band, uncalibrated
time and power MAPE % and geomean predicted/measured ratios; with a second CSV, that one's first
(before -> after).  A reading aid: it computes nothing the prediction uses.
"""
import csv
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BIN = os.path.join(ROOT, "build", "src", "cli", "opmodel")
LISTS = os.path.join(ROOT, "data", "energaizer", "workloads", "all")
INTERVAL_US = 21.0
BANDS = ((0.0, 0.1, "device-bound (< 0.1)"), (0.1, 0.6, "mixed (0.1-0.6)"), (0.6, 1.01, "host-bound (> 0.6)"))


def list_path(run):
    """The kernel list of a run name (without _attn, _freq, _iter), or None."""
    w = re.sub(r"\.csv$", "", run)
    w = re.sub(r"_iter\d+$", "", w)
    m = re.search(r"_freq(\d+)$", w)
    freq = m.group(1) if m else None
    if m:
        w = w[: m.start()]
    w = re.sub(r"_attn\w+$", "", w)
    for cand in (w, "%s_freq%s" % (w, freq)):
        p = os.path.join(LISTS, cand + ".json")
        if os.path.exists(p):
            return p
    return None


def host_share(cache, run):
    """The host-bound share of a run's time, or None when its kernel list is not in LISTS."""
    key = (run["workload"], run["hardware"], run["avg_freq_mhz"])
    if key not in cache:
        p = list_path(run["workload"])
        if p is None:
            cache[key] = None
            return None
        out = subprocess.check_output([BIN, "workload", p, "--hardware", run["hardware"], "--clock-mhz",
                                       run["avg_freq_mhz"], "--launch-interval-us", str(INTERVAL_US),
                                       "--format", "json"])
        j = json.loads(out)
        L = INTERVAL_US * 1e-6
        host = dev = 0.0
        for o in j["by_op"]:
            d = o["device_time_s"] / o["count"]
            if d < L:
                host += o["count"] * L
            else:
                dev += o["device_time_s"]
        cache[key] = host / (host + dev) if host + dev > 0 else 0.0
    return cache[key]


def scores(rows):
    n = len(rows)
    t = p = lt = lp = 0.0
    for r in rows:
        tm, em = float(r["measured_time_s"]), float(r["measured_energy_j"])
        tp, ep = float(r["uncalibrated_time_s"]), float(r["uncalibrated_energy_j"])
        pr = (ep / tp) / (em / tm)
        t += abs(tp / tm - 1)
        p += abs(pr - 1)
        lt += math.log(tp / tm)
        lp += math.log(pr)
    return "%6.2f (%.3f) %6.2f (%.3f)" % (100 * t / n, math.exp(lt / n), 100 * p / n, math.exp(lp / n))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: artifact_host_split.py VALIDATE_ARTIFACT.csv [BEFORE.csv]")
    after = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "scored"]
    before = None
    if len(sys.argv) == 3:
        b = {(r["file"], r["workload"]): r for r in csv.DictReader(open(sys.argv[2]))}
        before = b
    cache = {}
    share = {(r["file"], r["workload"]): host_share(cache, r) for r in after}
    # A run whose kernel list is missing has no host share: left out of every band.
    after = [r for r in after if share[(r["file"], r["workload"])] is not None]
    print("%-26s %-22s %4s  %s" % ("file", "host share at 21 us", "runs",
                                    ("before: " if before else "") + "time% (ratio) power% (ratio)" +
                                    (" -> after" if before else "")))
    for f in sorted({r["file"] for r in after}):
        for lo, hi, label in BANDS:
            g = [r for r in after if r["file"] == f and lo <= share[(r["file"], r["workload"])] < hi]
            if not g:
                continue
            cell = scores(g)
            if before:
                cell = scores([before[(r["file"], r["workload"])] for r in g]) + "  ->  " + cell
            print("%-26s %-22s %4d  %s" % (f, label, len(g), cell))


if __name__ == "__main__":
    main()
