#!/usr/bin/env python3
"""Vidur memory-bound rows grouped by shape: the diagnosis behind docs/kernel_models.md "Known misses".

Runs `opmodel validate` (uncalibrated, the shipped hardware entries) on data/kernels/vidur_memory_bound.jsonl
and prints, per (hardware, shape group, token bucket), the rows, geomean predicted/measured and MAPE;
then the geomean per measured-latency bucket (1 us steps), which shows how the model's floor compares
with Kineto's kernel durations. `--floor-shift-us X` also prints the per-GPU MAPE with every prediction
lowered by X us: a what-if for the floor, never shipped. `--cycle-ratio A,B` prints, per kind, the ratio of
the SM cycles each CTA takes on A and on B, (measured - fixed) x clock x SMs / CTAs, for the shapes of at
least 4096 tokens both GPUs ran (median over repeats): a ratio near 1 says the kind costs the same SM cycles
on both, whatever the hardware entries' latencies. Standard library only.

Usage (from the repository root, after building):
  python3 tools/vidur_shape_groups.py [--kind elementwise:silu_mul|rope|embedding|...] [--floor-shift-us 0.5]
                                      [--cycle-ratio a100_80gb_pcie,h100_sxm]
                                      [--bin build/src/cli/opmodel] [--data data/kernels/vidur_memory_bound.jsonl]
"""
import argparse
import collections
import csv
import json
import math
import os
import subprocess
import tempfile


def bucket(t):
    return "T<=256" if t <= 256 else ("T<=2048" if t <= 2048 else "T>2048")


def key_of(op, hw):
    k = op["kind"] + (":" + op.get("op", "") if op["kind"] == "elementwise" else "")
    if op["kind"] == "elementwise" and "shape" in op:
        t, w = op["shape"][0], op["shape"][-1]
        return k, (hw, "width %d" % w, bucket(t))
    if op["kind"] == "rope":
        t = op.get("batch", 1) * op.get("seq", 1)
        return k, (hw, "heads %d/%d hd %d" % (op["heads"], op["kv_heads"], op["head_dim"]), bucket(t))
    if op["kind"] == "embedding":
        return k, (hw, "dim %d" % op["dim"], bucket(op["tokens"]))
    return k, (hw, "all", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/src/cli/opmodel")
    ap.add_argument("--data", default="data/kernels/vidur_memory_bound.jsonl")
    ap.add_argument("--kind", default="elementwise:silu_mul")
    ap.add_argument("--floor-shift-us", type=float, default=None)
    ap.add_argument("--cycle-ratio", default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "v.csv")
        subprocess.run([a.bin, "validate", "--data", a.data, "--output-csv", out], check=True,
                       stdout=subprocess.DEVNULL)
        rows = list(csv.DictReader(open(out)))
    lines = open(a.data).read().splitlines()
    groups, floor = collections.defaultdict(list), collections.defaultdict(list)
    for r in rows:
        m, p = float(r["measured_latency_s"]), float(r["predicted_latency_s"])
        k, key = key_of(json.loads(lines[int(r["line"]) - 1])["op"], r["hardware"])
        floor[(r["hardware"], min(int(m * 1e6), 12))].append(p / m)
        if k == a.kind:
            groups[key].append(p / m)
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    print("| hardware | group | tokens | rows | geomean | MAPE % |\n|---|---|---|---:|---:|---:|")
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2])):
        v = groups[key]
        print("| %s | %s | %s | %d | %.2f | %.1f |" % (*key, len(v), geo(v), 100 * sum(abs(x - 1) for x in v) / len(v)))
    print("\n| hardware | measured us (12 = 12 and more) | rows | geomean |\n|---|---:|---:|---:|")
    for key in sorted(floor):
        print("| %s | %d | %d | %.2f |" % (*key, len(floor[key]), geo(floor[key])))
    if a.floor_shift_us is not None:
        for hw in sorted({r["hardware"] for r in rows}):
            v = [abs(float(r["predicted_latency_s"]) - a.floor_shift_us * 1e-6 - float(r["measured_latency_s"]))
                 / float(r["measured_latency_s"]) for r in rows if r["hardware"] == hw]
            print("floor shift %.2f us: %s MAPE %.2f%% over %d rows" % (a.floor_shift_us, hw, 100 * sum(v) / len(v), len(v)))
    if a.cycle_ratio:
        cycle_ratio(a.bin, lines, a.cycle_ratio.split(","))


def hw_numbers(binary, name):
    """clock_hz, num_sms and the kernel fixed time (s) of a built-in hardware entry."""
    out = subprocess.run([binary, "hardware", "show", name], check=True, capture_output=True, text=True).stdout
    v = {}
    for ln in out.splitlines():
        k, _, rest = ln.strip().partition(":")
        if k in ("clock_hz", "num_sms", "device_fixed_overhead_cycles") and k not in v:
            v[k] = float(rest.split("#")[0])
    return v["clock_hz"], v["num_sms"], v["device_fixed_overhead_cycles"] / v["clock_hz"]


def cycle_ratio(binary, lines, pair):
    hw = {n: hw_numbers(binary, n) for n in pair}
    meas = collections.defaultdict(lambda: collections.defaultdict(list))
    for ln in lines:
        j = json.loads(ln)
        op, name = j["op"], j["hardware"]
        if name not in hw:
            continue
        kind = op["kind"] + (":" + op.get("op", "") if op["kind"] == "elementwise" else "")
        if "shape" in op:
            tokens, ctas = op["shape"][0], op["shape"][0]
        elif kind == "rope":
            tokens = ctas = op.get("batch", 1) * op.get("seq", 1)
        else:
            continue  # embedding and adds launch grids that are not one CTA per token
        if tokens < 4096:
            continue
        key = json.dumps({k: v for k, v in op.items() if k != "name"}, sort_keys=True)
        meas[(kind, key, ctas)][name].append(j["measured"]["latency_s"])
    ratios = collections.defaultdict(list)
    for (kind, _, ctas), by in meas.items():
        if len(by) < 2:
            continue
        cyc = []
        for n in pair:
            v = sorted(by[n])
            clk, sms, fixed = hw[n]
            cyc.append((v[len(v) // 2] - fixed) * clk * sms / ctas)
        ratios[kind].append(cyc[0] / cyc[1])
    print("\n| kind | shapes | SM cycles per CTA, %s / %s: median | p10 | p90 |\n|---|---:|---:|---:|---:|" % tuple(pair))
    for kind in sorted(ratios):
        v = sorted(ratios[kind])
        print("| %s | %d | %.2f | %.2f | %.2f |" % (kind, len(v), v[len(v) // 2], v[len(v) // 10], v[9 * len(v) // 10]))


if __name__ == "__main__":
    main()
