#!/usr/bin/env python3
"""Build opmodel's tensor-core GEMM latency set (contract section 4) from the measured sources.

Reads the shared `gemm.csv` of
  <src>/aiconfigurator/               (NVIDIA ai-dynamo/aiconfigurator perf database, Apache-2.0)
  <src>/vidur/                        (microsoft/vidur profiling CSVs, MIT)
  <src>/aiter/                        (ROCm/aiter tuned-GEMM CSVs, MIT)
  <src>/deepgemm/                     (deepseek-ai/DeepGEMM README tables, MIT)
  <src>/azure_ai_benchmarking_guide/  (Azure AI-benchmarking-guide results, MIT)
and writes one CSV per (source, hardware, dtype[, timing class]) into <out>, plus each upstream
LICENSE as LICENSE.<source>. Standard library only; output is sorted and byte-for-byte reproducible.

Usage (from the repository root):
  python3 tools/curate_tc_data.py [--src ../shared/data/measured] [--out data/gemm_tc] [--stats]

Mapping (details and traps in data/README.md, section gemm_tc/):
  Every shared gemm.csv row is y[M,N] = x[M,K] @ W[N,K]^T (an nn.Linear weight, stored [out, in]).
  In opmodel's row-major terms C[m,n] = A[m,k] . B[k,n] with B stored [n,k]: m=M, n=N, k=K,
  transpose_a=0, transpose_b=1; batch and bias as given. latency_us is kept as given (µs).
  Two extra columns make each source's traps explicit:
    activation_quant  none | dynamic | dynamic_block | block   (what the timed op did to x)
    timing            graph | eager | kernel | events          (how the time was taken)
    l2_warm           none | input | all    (operands the harness leaves resident in L2 when the
                      GEMM starts: aiconfigurator and Vidur share the activation between calls /
                      take it from the kernel before; Azure runs one problem 10,000 times without a
                      flush; DeepGEMM flushes L2 and aiter rotates buffers beyond it)
    operand_copies    N or empty (the harness runs the GEMM in turn over N copies of its weight,
                      and of its input where l2_warm does not share it: aiconfigurator's collectors
                      build 6 (`outside_loop_count`), its vLLM fp8-block path 1; a copy's operands
                      are L2-resident when all N fit)
  The `source` column is `<family>:<origin>` (origin = upstream commit or framework version);
  for aiconfigurator, whose GPUs each carry three conventions, it is
  `aiconfigurator:<framework>:<timing>[:<activation_quant>]`, so that validate-gemm-latency's
  calibration groups (source up to its first '/') never mix two timing conventions or an op with
  and without quantisation kernels on the same hardware.
  --stats prints the README tables (files, size classes, latency floors, best TFLOP/s).
"""

import argparse
import csv
import glob
import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curate_gemm_data  # noqa: E402  (write_file: the shared sorted CSV writer)
from curate_gemm_data import fmt_float  # noqa: E402

COLUMNS = ["hardware", "dtype", "batch", "m", "n", "k", "transpose_a", "transpose_b", "bias",
           "latency_us", "energy_j", "clock_mhz", "kernel", "source", "threads_per_cta", "split_k",
           "activation_quant", "timing", "l2_warm", "operand_copies"]

IN_COLUMNS = ["hardware", "dtype", "batch", "m", "n", "k", "transpose_a", "transpose_b", "bias",
              "latency_us", "kernel", "source"]

# Shared folder -> (short source name used in file names, LICENSE.<name> and `source`).
SOURCES = [
    ("aiconfigurator", "aiconfigurator"),
    ("vidur", "vidur"),
    ("aiter", "aiter"),
    ("deepgemm", "deepgemm"),
    ("azure_ai_benchmarking_guide", "azure_aibg"),
]

# Origin commits (from each shared folder's README.md), short form used in `source`.
ORIGIN = {
    "vidur": "7d47513",          # microsoft/vidur 7d47513363ec447a741ac5e47241580b47724fbf
    "aiter": "e404860",          # ROCm/aiter e4048607a535ace3a2b51ded31b1c8c2d45c0879
    "azure_aibg": "2b25b69",     # samuel-bohman/AI-benchmarking-guide 2b25b6966d7a14de809214e8b37b1b1e74d4e0e0
}

# The opmodel built-in hardware names the shared files already use.
HARDWARE = {"a100_80gb_sxm", "a100_80gb_pcie", "h100_sxm", "h200_sxm", "l40s", "mi300x"}
DTYPES = {"bf16", "fp16", "fp8_e4m3", "int8"}

# Dense tensor-core peaks (TFLOP/s) as in configs/hardware/<name>.yaml (`tensor_flops_per_s`),
# used only for the --stats sanity column.
PEAK_TFLOPS = {
    ("a100_80gb_sxm", "bf16"): 312.0, ("a100_80gb_sxm", "fp16"): 312.0,
    ("a100_80gb_pcie", "bf16"): 312.0, ("a100_80gb_pcie", "fp16"): 312.0,
    ("h100_sxm", "bf16"): 989.4, ("h100_sxm", "fp16"): 989.4, ("h100_sxm", "fp8_e4m3"): 1978.9,
    ("h200_sxm", "bf16"): 989.4, ("h200_sxm", "fp16"): 989.4, ("h200_sxm", "fp8_e4m3"): 1978.9,
    ("l40s", "bf16"): 362.05, ("l40s", "fp16"): 362.05, ("l40s", "fp8_e4m3"): 733.0,
    ("mi300x", "bf16"): 1307.4, ("mi300x", "fp16"): 1307.4, ("mi300x", "fp8_e4m3"): 2614.9,
    ("mi300x", "int8"): 2614.9,
}

# DRAM bandwidth (bytes/s) as in configs/hardware/<name>.yaml, for the --stats L2-warm check.
HBM_BYTES_PER_S = {
    "a100_80gb_sxm": 2.039e12, "a100_80gb_pcie": 1.935e12, "h100_sxm": 3.35e12,
    "h200_sxm": 4.8e12, "l40s": 0.864e12, "mi300x": 5.3e12,
}

CLASS_NAMES = ["vector_like", "small", "skinny", "small_k", "large", "regular"]

MAX_DIM = 1 << 40          # validate-gemm-latency's bound on batch/m/n/k


def warn(msg):
    sys.stderr.write("curate_tc_data: " + msg + "\n")




def size_class(b, m, n, k):
    """Contract section 5 size class (same tests, same order as opm_gemm_size_class)."""
    lo, hi = min(m, n), max(m, n)
    if m == 1 and n > 1 and k > 1:
        return "vector_like"
    if m * n <= 4096:
        return "small"
    if lo <= 64 and hi / lo >= 8:
        return "skinny"
    if k <= 32:
        return "small_k"
    if m * n >= 1048576 or 2 * b * m * n * k >= 1e12:
        return "large"
    return "regular"


# ---------------------------------------------------------------------------------------------
# Per-source classification: (activation_quant, timing, source tag) of one shared row.
# ---------------------------------------------------------------------------------------------

def classify(name, r):
    kernel, src = r["kernel"], r["source"]
    if name == "aiconfigurator":
        origin = src                                  # aic_vllm0.24.0 / aic_sglang0.5.10
        if kernel == "F.linear":
            aq, timing = "none", "graph"
        elif kernel == "dynquant+cutlass_fp8_scaled_mm":
            aq, timing = "dynamic", "graph"
        elif kernel.startswith("dynquant+") and kernel.endswith("_fp8_block"):
            aq, timing = "dynamic_block", "eager"
        else:
            raise SystemExit("aiconfigurator: unknown kernel %r" % kernel)
    elif name == "vidur":
        origin, aq, timing = ORIGIN["vidur"], "none", "kernel"
    elif name == "aiter":
        origin, timing = ORIGIN["aiter"], "kernel"
        aq = "block" if kernel.startswith("a8w8_blockscale:") else "none"
    elif name == "deepgemm":
        if not src.startswith("deepgemm@"):
            raise SystemExit("deepgemm: unexpected source %r" % src)
        origin, aq, timing = src[len("deepgemm@"):], "block", "kernel"
    elif name == "azure_aibg":
        origin, aq, timing = ORIGIN["azure_aibg"], "none", "events"
    else:
        raise SystemExit("unknown source %s" % name)
    tag = "%s:%s" % (name, origin)
    if name == "aiconfigurator":
        # One GPU has three conventions here (graph, graph + dynamic quant kernels, eager + dynamic
        # block quant): the tag names them so that they calibrate separately.
        tag += ":" + timing + ("" if aq == "none" else ":" + aq)
    return aq, timing, tag


# Operands resident in L2 when the timed GEMM starts, by source (see the docstring).
L2_WARM = {"aiconfigurator": "input", "vidur": "input", "azure_aibg": "all", "deepgemm": "none",
           "aiter": "none"}


def harness_l2(name, r, aq):
    """(l2_warm, operand_copies) of one row.  aiconfigurator's collectors
    (collector/vllm/collect_gemm.py, collector/sglang/collect_gemm.py) build
    `outside_loop_count` = 6 copies of the layer and run them in turn inside
    the timed graph (1 for vLLM's fp8-block path); vLLM's copies share one
    input x, SGLang's each draw their own."""
    if name == "azure_aibg" and "--flush" in r["kernel"]:
        # The MI300X rows ran hipblaslt-bench --flush over a rotating 512 MB buffer (larger than the
        # 32 MB L2 and the 256 MB Infinity Cache); the NVIDIA ones ran without a flush.
        return "none", ""
    if name != "aiconfigurator":
        return L2_WARM[name], ""
    if r["source"].startswith("aic_sglang"):
        return "none", 6
    return L2_WARM[name], 1 if aq == "dynamic_block" else 6


def parse_int(s, lo, hi):
    try:
        v = int(s)
    except (TypeError, ValueError):
        return None
    return v if lo <= v <= hi else None


def read_source(src, folder, name, invalid):
    """Yield (group key, row dict) for every valid row of <src>/<folder>/gemm.csv."""
    path = os.path.join(src, folder, "gemm.csv")
    with open(path, newline="") as fh:
        rd = csv.DictReader(fh)
        if rd.fieldnames != IN_COLUMNS:
            raise SystemExit("%s: unexpected header %r" % (path, rd.fieldnames))
        for lineno, r in enumerate(rd, start=2):
            why = None
            dims = [parse_int(r[c], 1, MAX_DIM) for c in ("batch", "m", "n", "k")]
            flags = [parse_int(r[c], 0, 1) for c in ("transpose_a", "transpose_b", "bias")]
            try:
                lat = float(r["latency_us"])
            except (TypeError, ValueError):
                lat = float("nan")
            if r["hardware"] not in HARDWARE:
                why = "unknown hardware %r" % r["hardware"]
            elif r["dtype"] not in DTYPES:
                why = "unknown dtype %r" % r["dtype"]
            elif None in dims:
                why = "bad shape"
            elif None in flags or flags[0] != 0 or flags[1] != 1:
                why = "bad transpose/bias flags (expected x[M,K] @ W[N,K].T)"
            elif not (lat > 0.0) or math.isinf(lat):
                why = "non-positive or unparsable latency %r" % r["latency_us"]
            if why:
                invalid[name] = invalid.get(name, 0) + 1
                warn("%s:%d: skipped invalid row (%s)" % (path, lineno, why))
                continue
            aq, timing, tag = classify(name, r)
            warm, copies = harness_l2(name, r, aq)
            kernel = r["kernel"].replace(",", ";")     # keep cells free of quoted commas
            batch, m, n, k = dims
            row = {
                "hardware": r["hardware"], "dtype": r["dtype"], "batch": batch, "m": m, "n": n,
                "k": k, "transpose_a": 0, "transpose_b": 1, "bias": flags[2],
                "latency_us": lat, "energy_j": "", "clock_mhz": "", "kernel": kernel,
                "source": tag, "threads_per_cta": "", "split_k": "",
                "activation_quant": aq, "timing": timing, "l2_warm": warm,
                "operand_copies": copies,
            }
            yield (name, r["hardware"], r["dtype"], timing), row


def file_names(groups):
    """(source, hardware, dtype, timing) -> file name; the timing class is part of the name only
    where one (source, hardware, dtype) has rows of more than one timing class."""
    timings = {}
    for (name, hw, dt, timing) in groups:
        timings.setdefault((name, hw, dt), set()).add(timing)
    out = {}
    for key in groups:
        name, hw, dt, timing = key
        base = "%s_%s_%s" % (name, hw, dt)
        out[key] = base + ("_" + timing if len(timings[(name, hw, dt)]) > 1 else "") + ".csv"
    return out


def sort_key(row):
    return (row["hardware"], row["dtype"], row["batch"], row["m"], row["n"], row["k"],
            row["transpose_a"], row["transpose_b"], row["bias"], row["latency_us"],
            row["kernel"], row["source"], row["activation_quant"], row["timing"])




# ---------------------------------------------------------------------------------------------
# --stats
# ---------------------------------------------------------------------------------------------

def fmt_int(n):
    return "{:,}".format(n)


def fmt_size(nbytes):
    if nbytes >= 1000000:
        return "%.1f MB" % (nbytes / 1e6)
    return "%d KB" % max(1, round(nbytes / 1e3))


def percentile(sorted_vals, p):
    """Nearest-rank percentile (the ceil(p/100 * n)-th smallest value)."""
    i = max(1, math.ceil(p / 100.0 * len(sorted_vals)))
    return sorted_vals[i - 1]


def print_stats(out, files):
    counts = {c: 0 for c in CLASS_NAMES}
    print("| file | source | GPU (`hardware`) | dtype | timing | activation_quant | rows | size |")
    print("|---|---|---|---|---|---|---:|---:|")
    total_rows = total_bytes = 0
    for fname in sorted(files):
        rows = files[fname]
        size = os.path.getsize(os.path.join(out, fname))
        total_rows += len(rows)
        total_bytes += size
        aqs = sorted(set(r["activation_quant"] for r in rows))
        aq_txt = ", ".join("%s %s" % (a, fmt_int(sum(1 for r in rows if r["activation_quant"] == a)))
                           for a in aqs) if len(aqs) > 1 else aqs[0]
        print("| `%s` | %s | `%s` | %s | %s | %s | %s | %s |" % (
            fname, rows[0]["source"].split(":")[0],
            rows[0]["hardware"], rows[0]["dtype"], rows[0]["timing"], aq_txt,
            fmt_int(len(rows)), fmt_size(size)))
    print("| **total** | | | | | | **%s** | **%s** |" % (fmt_int(total_rows), fmt_size(total_bytes)))
    print()

    print("| file | " + " | ".join(CLASS_NAMES) + " |")
    print("|---|" + "---:|" * len(CLASS_NAMES))
    for fname in sorted(files):
        c = {x: 0 for x in CLASS_NAMES}
        for r in files[fname]:
            c[size_class(r["batch"], r["m"], r["n"], r["k"])] += 1
        for x in CLASS_NAMES:
            counts[x] += c[x]
        print("| `%s` | " % fname + " | ".join(fmt_int(c[x]) for x in CLASS_NAMES) + " |")
    print("| **total** | " + " | ".join("**%s**" % fmt_int(counts[x]) for x in CLASS_NAMES) + " |")
    print()

    print("| file | min µs | p5 µs | best TFLOP/s | at (batch, m, n, k) | of dense peak |")
    print("|---|---:|---:|---:|---|---:|")
    for fname in sorted(files):
        rows = files[fname]
        lats = sorted(r["latency_us"] for r in rows)

        def tflops(r):
            return 2.0 * r["batch"] * r["m"] * r["n"] * r["k"] / (r["latency_us"] * 1e-6) / 1e12
        best = max(rows, key=lambda r: (tflops(r), -r["latency_us"], r["m"], r["n"], r["k"]))
        peak = PEAK_TFLOPS.get((best["hardware"], best["dtype"]))
        frac = "%.3f" % (tflops(best) / peak) if peak else "—"
        print("| `%s` | %s | %s | %.1f | (%d, %d, %d, %d) | %s |" % (
            fname, fmt_float(lats[0]), fmt_float(percentile(lats, 5)), tflops(best),
            best["batch"], best["m"], best["n"], best["k"], frac))
    print()

    # Rows above the dense peak and same-shape repeats inside one file.
    over = []
    for fname in sorted(files):
        for r in files[fname]:
            peak = PEAK_TFLOPS.get((r["hardware"], r["dtype"]))
            t = 2.0 * r["batch"] * r["m"] * r["n"] * r["k"] / (r["latency_us"] * 1e-6) / 1e12
            if peak and t > peak:
                over.append((fname, r, t / peak))
    print("rows above the dense peak: %d" % len(over))
    for fname, r, f in over:
        print("  %s (%d, %d, %d, %d) %s us = %.3f x peak" % (
            fname, r["batch"], r["m"], r["n"], r["k"], fmt_float(r["latency_us"]), f))
    # Rows faster than DRAM allows (each operand and the bf16/fp16 output moved once: the data
    # must have come from L2), and spikes: rows over 2x both neighbours in m at the same
    # (batch, n, k, source).
    print()
    print("| file | rows above the DRAM rate | highest rate / DRAM | m-spikes (> 2x both m neighbours) |")
    print("|---|---:|---:|---:|")
    for fname in sorted(files):
        rows = files[fname]
        n_fast, worst = 0, 0.0
        line = {}
        for r in rows:
            es = 1 if r["dtype"] in ("fp8_e4m3", "int8") else 2
            nbytes = r["batch"] * (r["m"] * r["k"] * es + r["n"] * r["k"] * es + r["m"] * r["n"] * 2)
            rate = nbytes / (r["latency_us"] * 1e-6) / HBM_BYTES_PER_S[r["hardware"]]
            if rate > 1.0:
                n_fast += 1
            worst = max(worst, rate)
            line.setdefault((r["batch"], r["n"], r["k"], r["bias"], r["source"]), []).append(
                (r["m"], r["latency_us"]))
        spikes = 0
        for pts in line.values():
            pts.sort()
            for i in range(1, len(pts) - 1):
                if pts[i][1] > 2.0 * max(pts[i - 1][1], pts[i + 1][1]):
                    spikes += 1
        if n_fast or spikes:
            print("| `%s` | %s | %.2f | %d |" % (fname, fmt_int(n_fast), worst, spikes))
    print()
    for fname in sorted(files):
        seen = {}
        for r in files[fname]:
            key = (r["batch"], r["m"], r["n"], r["k"], r["bias"])
            seen[key] = seen.get(key, 0) + 1
        rep = sum(1 for v in seen.values() if v > 1)
        if rep:
            print("%s: %d shapes appear more than once" % (fname, rep))


def main(argv=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(root, "..", "shared", "data", "measured"),
                    help="measured-data folder (default: ../shared/data/measured)")
    ap.add_argument("--out", default=os.path.join(root, "data", "gemm_tc"),
                    help="output folder (default: data/gemm_tc)")
    ap.add_argument("--stats", action="store_true",
                    help="also print the README tables (files, size classes, floors, best TFLOP/s)")
    args = ap.parse_args(argv)
    src = os.path.normpath(args.src)
    out = os.path.normpath(args.out)
    for folder, _ in SOURCES:
        for f in ("gemm.csv", "LICENSE"):
            if not os.path.isfile(os.path.join(src, folder, f)):
                raise SystemExit("missing %s" % os.path.join(src, folder, f))
    os.makedirs(out, exist_ok=True)

    groups = {}
    invalid = {}
    for folder, name in SOURCES:
        for key, row in read_source(src, folder, name, invalid):
            groups.setdefault(key, []).append(row)
    names = file_names(groups)
    files = {}
    for key in groups:
        files.setdefault(names[key], []).extend(groups[key])
    for fname in files:
        files[fname].sort(key=sort_key)

    # Remove generated files of an earlier run that this run no longer produces.
    prefixes = tuple(name + "_" for _, name in SOURCES)
    for stale in sorted(glob.glob(os.path.join(out, "*.csv"))):
        base = os.path.basename(stale)
        if base.startswith(prefixes) and base not in files:
            os.remove(stale)

    total = 0
    for fname in sorted(files):
        curate_gemm_data.write_file(os.path.join(out, fname), files[fname], COLUMNS, sort_key)
        total += len(files[fname])
        print("%-48s %7d rows" % (fname, len(files[fname])))
    print("%-48s %7d rows" % ("total", total))
    for _, name in SOURCES:
        print("%-48s %7d invalid rows skipped" % (name, invalid.get(name, 0)))

    for folder, name in SOURCES:
        shutil.copyfile(os.path.join(src, folder, "LICENSE"), os.path.join(out, "LICENSE." + name))

    if args.stats:
        print()
        print_stats(out, files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
