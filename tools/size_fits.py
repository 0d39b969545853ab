#!/usr/bin/env python3
"""size_fits.py — measured and predicted latency against size, fitted as a straight line per group: the
diagnosis behind docs/kernel_models.md "Known misses" (NeuSight host dispatch, Vidur rope per head).

Runs `opmodel validate` (uncalibrated, the shipped hardware entries) on the given JSONL files and fits
latency = intercept + slope x size by least squares in each group, for the measurements and for the
predictions alike, so that a fixed cost the model misses (an intercept) and a per-byte or per-token
cost it misses (a slope) show apart:
  neusight  (data/kernels/neusight_{softmax,layernorm}.jsonl): per (hardware, kind, H <= 1024 or above),
            size = the input's MB (B x H x 4 bytes); prints the intercepts in us and the slopes in us/MB.
            An intercept far above the host dispatch `validate` adds (21 us) on every GPU of one kind
            is host time, not a kernel's;
  rope      (data/kernels/vidur_memory_bound.jsonl): per (hardware, heads/kv_heads/head_dim), rows of
            at least --min-tokens tokens, size = tokens; prints the slope as SM cycles per token
            (slope x clock x SMs): equal figures on two GPUs mean the kind costs the same SM cycles on
            both, whatever their latencies.
No fit is used by the model. Standard library only.

Usage (from the repository root, after building):
  python3 tools/size_fits.py neusight [--bin build/src/cli/opmodel]
  python3 tools/size_fits.py rope [--min-tokens 1024] [--bin build/src/cli/opmodel]
"""
import argparse
import collections
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

DEFAULT_DATA = {
    "neusight": ["data/kernels/neusight_softmax.jsonl", "data/kernels/neusight_layernorm.jsonl"],
    "rope": ["data/kernels/vidur_memory_bound.jsonl"],
}


def line_fit(xs, ys):
    """Least-squares intercept and slope; None when x does not vary."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 2 or sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope


def validate_rows(binary, files):
    """(op, hardware, measured_s, predicted_s) of every scored line."""
    lines = {}
    for f in files:
        with open(f) as fh:
            lines[f] = fh.read().splitlines()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rows.csv")
        cmd = [binary, "validate", "--output-csv", out]
        for f in files:
            cmd += ["--data", f]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as fh:
            rows = list(csv.DictReader(fh))
    for r in rows:
        op = json.loads(lines[r["file"]][int(r["line"]) - 1])["op"]
        yield op, r["hardware"], float(r["measured_latency_s"]), float(r["predicted_latency_s"])


def hw_figures(binary, name):
    doc = json.loads(subprocess.run([binary, "hardware", "show", name, "--format", "json"], check=True,
                                    capture_output=True, text=True).stdout)
    return doc["compute"]["clock_hz"], doc["compute"]["num_sms"]


def summary(pairs):
    r = [p / m for m, p in pairs]
    return 100 * sum(abs(x - 1) for x in r) / len(r), math.exp(sum(math.log(x) for x in r) / len(r))


def neusight(binary, files):
    groups = collections.defaultdict(list)
    for op, hw, m, p in validate_rows(binary, files):
        b, h = op["shape"]
        groups[(hw, op["kind"], "H<=1024" if h <= 1024 else "H>1024")].append((b * h * 4 / 1e6, m, p))
    print("| hardware | kind | H | rows | measured us + us/MB | predicted us + us/MB | MAPE % | geomean |")
    print("|---|---|---|---:|---|---|---:|---:|")
    for k in sorted(groups):
        v = groups[k]
        fm = line_fit([x for x, _, _ in v], [m * 1e6 for _, m, _ in v])
        fp = line_fit([x for x, _, _ in v], [p * 1e6 for _, _, p in v])
        mape, gm = summary([(m, p) for _, m, p in v])
        cell = lambda f: "%.1f + %.3f" % f if f else "-"
        print("| %s | %s | %s | %d | %s | %s | %.1f | %.2f |" % (k[0], k[1], k[2], len(v), cell(fm), cell(fp), mape, gm))


def rope(binary, files, min_tokens):
    groups = collections.defaultdict(list)
    for op, hw, m, p in validate_rows(binary, files):
        if op["kind"] != "rope":
            continue
        t = op.get("batch", 1) * op.get("seq", 1)
        if t >= min_tokens:
            groups[(hw, op["heads"], op["kv_heads"], op["head_dim"])].append((t, m, p))
    figs = {}
    print("| hardware | heads/kv/hd | rows | measured SM cycles per token | predicted | per head (measured) | MAPE % | geomean |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for k in sorted(groups, key=lambda k: (k[0], k[1] + k[2], k[1], k[3])):
        v = groups[k]
        if k[0] not in figs:
            figs[k[0]] = hw_figures(binary, k[0])
        clock, sms = figs[k[0]]
        fm = line_fit([t for t, _, _ in v], [m for _, m, _ in v])
        fp = line_fit([t for t, _, _ in v], [p for _, _, p in v])
        if not fm or not fp:
            continue
        cm, cp = fm[1] * clock * sms, fp[1] * clock * sms
        mape, gm = summary([(m, p) for _, m, p in v])
        print("| %s | %d/%d/%d | %d | %.0f | %.0f | %.0f | %.1f | %.2f |"
              % (k[0], k[1], k[2], k[3], len(v), cm, cp, cm / (k[1] + k[2]), mape, gm))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=sorted(DEFAULT_DATA))
    ap.add_argument("--bin", default="build/src/cli/opmodel")
    ap.add_argument("--data", action="append", help="JSONL file (repeatable; default: the mode's files)")
    ap.add_argument("--min-tokens", type=int, default=1024, help="rope: fit rows of at least this many tokens")
    a = ap.parse_args()
    files = a.data or DEFAULT_DATA[a.mode]
    if a.mode == "neusight":
        neusight(a.bin, files)
    else:
        rope(a.bin, files, a.min_tokens)
    return 0


if __name__ == "__main__":
    sys.exit(main())
