#!/usr/bin/env python3
"""Fit and leave-one-GPU-out check of stream.c's STREAM_KNEE_P on every non-attention line of data/kernels.

The streaming kernels' time is fixed + max(knee(stream, chain), L2 stream, vector math, CTA launches),
knee(a, b) = (a^P + b^P)^(1/P) (P = 0: the larger of the two).  `opmodel predict --batch` gives each
line's terms as diagnostics (stream_time_s, chain_time_s, l2_time_s, compute_time_s,
cta_launch_time_s, overhead_s), so every P is scored exactly from one run of the shipped binary:
the line's `validate` prediction (which adds the host dispatch of `timing: events` lines) less the
shipped latency plus the latency at P.  P is fitted two ways, on the lines (each line weighs the
same) and on the mean per GPU (each GPU weighs the same); each GPU is then left out in turn and P refitted
on the others.  Standard library only.

Usage (from the source root): python3 tools/refit_stream_knee.py [--bin build/src/cli/opmodel]
       [--data data/kernels] [--grid 1.25,1.5,...]
"""
import argparse
import collections
import csv
import glob
import json
import os
import subprocess
import tempfile

KINDS_OUT = ("attention_prefill", "attention_decode")


def knee(a, b, p):
    return max(a, b) if p == 0 else (a ** p + b ** p) ** (1.0 / p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/src/cli/opmodel")
    ap.add_argument("--data", default="data/kernels")
    ap.add_argument("--model", default="extended_roofline")
    ap.add_argument("--grid", default="1.25,1.5,1.75,2,2.25,2.5,3,4,0")
    a = ap.parse_args()
    grid = [float(x) for x in a.grid.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.csv")
        subprocess.run([a.bin, "validate", "--data", a.data, "--model", a.model, "--output-csv", out],
                       check=True, stdout=subprocess.DEVNULL)
        val = {(r["file"], int(r["line"])): r for r in csv.DictReader(open(out))}
        ops = collections.defaultdict(list)  # hardware -> [(key, op)]
        for f in sorted(glob.glob(os.path.join(a.data, "*.jsonl"))):
            for i, line in enumerate(open(f), 1):
                d = json.loads(line)
                if d["op"]["kind"] in KINDS_OUT:
                    continue
                k = (f, i)
                if k in val:
                    ops[d["hardware"]].append((k, d["op"]))
        rows = []  # (hardware, measured, validate prediction less the shipped latency, terms)
        for hw, lst in ops.items():
            path = os.path.join(tmp, "ops.jsonl")
            with open(path, "w") as o:
                for _, op in lst:
                    o.write(json.dumps(op) + "\n")
            res = subprocess.run([a.bin, "predict", "--hardware", hw, "--model", a.model, "--batch", path],
                                 check=True, capture_output=True, text=True).stdout.splitlines()
            for (k, _), line in zip(lst, res):
                p = json.loads(line)
                if "error" in p:  # an op --batch could not predict: no stream terms to refit
                    continue
                g = p["diagnostics"]
                if "stream_time_s" not in g:
                    continue
                v = val[k]
                rows.append((hw, float(v["measured_latency_s"]), float(v["predicted_latency_s"]) - p["latency_s"],
                             (g["stream_time_s"], g["chain_time_s"], g["l2_time_s"], g["compute_time_s"],
                              g["cta_launch_time_s"], g["overhead_s"])))

    def pred(r, p):
        s, c, l2, v, launch, fixed = r[3]
        return r[2] + fixed + max(knee(s, c, p), l2, v, launch)

    hws = sorted(set(r[0] for r in rows))
    ape = {p: collections.defaultdict(list) for p in grid}
    for r in rows:
        for p in grid:
            ape[p][r[0]].append(abs(pred(r, p) - r[1]) / r[1] * 100)

    def on_lines(p, keep):
        e = [x for h in keep for x in ape[p][h]]
        return sum(e) / len(e)

    def per_gpu(p, keep):
        return sum(sum(ape[p][h]) / len(ape[p][h]) for h in keep) / len(keep)

    name = lambda p: "max" if p == 0 else "%g" % p
    print("%d lines, %d GPUs" % (len(rows), len(hws)))
    print("| P | MAPE % over lines | mean MAPE % per GPU | " + " | ".join(hws) + " |")
    print("|---|---:|---:|" + "---:|" * len(hws))
    for p in grid:
        print("| %s | %.2f | %.2f | " % (name(p), on_lines(p, hws), per_gpu(p, hws)) +
              " | ".join("%.1f" % (sum(ape[p][h]) / len(ape[p][h])) for h in hws) + " |")
    for what, f in (("lines", on_lines), ("mean per GPU", per_gpu)):
        best = min(grid, key=lambda p: f(p, hws))
        print("\nfitted on %s: P = %s; each GPU left out (refit on the others -> held-out MAPE %%):" % (what, name(best)))
        print("| held out | P refitted | held-out MAPE % | at P = max (no knee) |")
        print("|---|---:|---:|---:|")
        for h in hws:
            keep = [x for x in hws if x != h]
            q = min(grid, key=lambda p: f(p, keep))
            m = lambda p: sum(ape[p][h]) / len(ape[p][h])
            print("| %s | %s | %.1f | %.1f |" % (h, name(q), m(q), m(0) if 0 in grid else float("nan")))


if __name__ == "__main__":
    main()
