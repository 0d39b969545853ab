#!/usr/bin/env python3
"""Leave-one-GPU-out refit of the attention model's fitted constants.

For each fitted constant of src/models/attention_kernel.c (one at a time, the
others at their shipped values) and each candidate value in its bounds, builds
the library with that value (-D, a separate build folder) and scores
data/kernels/aic_attention_{prefill,decode}.jsonl uncalibrated with
`opmodel validate`.  Then, for each GPU held out in turn, picks the value with
the lowest MAPE pooled over the other GPUs' rows and reports the held-out
GPU's MAPE at that value, next to its MAPE at the shipped value.

  python3 tools/refit_kernel_constants.py [--build /tmp/opm-refit] [--jobs 2]

Slow (one build per candidate, about a minute each on two cores)."""
import argparse, json, os, subprocess, sys

CONSTANTS = {
    # name: (shipped, candidates within its bounds)
    "ATTN_CTA_DRAM_TRIPS": (8.0, [4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0]),
    "FA3_OVERLAP_LOSS": (0.75, [0.0, 0.25, 0.5, 0.75, 1.0]),
    "SERVING_EXTRA_KERNELS": (4.0, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
}
DATA = ["data/kernels/aic_attention_prefill.jsonl", "data/kernels/aic_attention_decode.jsonl"]


def score(root, build, defines):
    args = " ".join("-D%s=%r" % kv for kv in defines.items())
    if not os.path.isdir(build):
        subprocess.run(["meson", "setup", build, "-Dtests=false", "--buildtype=release", "-Dc_args=" + args],
                       cwd=root, check=True, stdout=subprocess.DEVNULL)
    else:
        subprocess.run(["meson", "configure", build, "-Dc_args=" + args], cwd=root, check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run(["meson", "compile", "-C", build, "src/cli/opmodel:executable"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    cmd = [os.path.join(build, "src/cli/opmodel"), "validate", "--format", "json"]
    for d in DATA:
        cmd += ["--data", d]
    out = subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    return {hw: (s["rows"], s["mape"]) for hw, s in rep["by_hardware"].items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="/tmp/opm-refit")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print("constant value: per-GPU MAPE % (uncalibrated, attention prefill + decode)")
    results = {}
    for name, (shipped, cands) in CONSTANTS.items():
        for v in cands:
            per = score(root, a.build, {name: v})
            results[(name, v)] = per
            print("%s=%g: %s" % (name, v, ", ".join("%s %.1f" % (h, m) for h, (_, m) in sorted(per.items()))),
                  flush=True)
    gpus = sorted(next(iter(results.values())).keys())
    print("\nheld-out GPU: value refitted on the others -> its MAPE (at the shipped value)")
    for name, (shipped, cands) in CONSTANTS.items():
        for g in gpus:
            def pooled(v):
                per = results[(name, v)]
                n = sum(per[h][0] for h in per if h != g)
                return sum(per[h][0] * per[h][1] for h in per if h != g) / n
            best = min(cands, key=pooled)
            print("%s, %s held out: %g -> %.1f (shipped %g: %.1f)" %
                  (name, g, best, results[(name, best)][g][1], shipped, results[(name, shipped)][g][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
