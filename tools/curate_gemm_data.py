#!/usr/bin/env python3
"""Build opmodel's curated GEMM latency set (contract section 4) from the measured sources.

Reads
  <src>/neusight/{bmm,linear}/*.csv                    (NeuSight, MIT)
  <src>/deepbench/csv_converted/**/*.csv               (DeepBench, Apache-2.0)
and writes one CSV per source and GPU (and dtype for DeepBench) into <out>, plus the two upstream
LICENSE files. Standard library only; output is sorted and byte-for-byte reproducible.

Usage (from the repository root):
  python3 tools/curate_gemm_data.py [--src ../shared/data/measured] [--out data/gemm]

Column mapping and traps are documented in data/README.md; the short version:
  NeuSight bmm    (collector names B,M,N,K): torch.bmm (B,M,N) x (B,N,K)
                  -> batch=B, m=M, k=N, n=K, no transposes, no bias.
  NeuSight linear nn.Linear(N, K, bias=True) on (B,M,N)
                  -> batch=1, m=B*M, k=N, n=K, transpose_b=1 (weight stored [n,k]), bias=1.
  Latency (ms) -> latency_us = ms * 1000.
  DeepBench       cuBLAS column-major C(M,N) = op(A)(M,K) * op(B)(K,N); the same memory read as
                  row-major is C^T(N,M) = op(B)^T * op(A)^T, so
                  -> m=N, n=M, k=K, transpose_a=(B Transpose == T), transpose_b=(A Transpose == T).
                  Time (msec) -> latency_us = ms * 1000. int8 rows whose M was padded by DeepBench
                  (Padded Kernels = 1) are written with the shape that actually ran (n = M rounded
                  up to a multiple of 4).
"""

import argparse
import csv
import glob
import os
import re
import shutil
import sys

COLUMNS = ["hardware", "dtype", "batch", "m", "n", "k", "transpose_a", "transpose_b", "bias",
           "latency_us", "energy_j", "clock_mhz", "kernel", "source", "threads_per_cta", "split_k"]

# NeuSight `Device` column -> opmodel built-in hardware name.
NEUSIGHT_HW = {
    "NVIDIA A100-PCIE-40GB": "a100_40gb_pcie",
    "Tesla V100-PCIE-32GB": "v100_pcie_32gb",
    "Tesla T4": "t4",
    "Tesla P100-PCIE-16GB": "p100_pcie_16gb",
    "Tesla P4": "p4",
}

# DeepBench sheet GPU token -> opmodel built-in hardware name (reasoning in data/README.md:
# V100 ran in a DGX-1, i.e. SXM2; P100 in an ASUS X99-E WS workstation, i.e. PCIe).
DEEPBENCH_HW = {
    "V100": "v100_sxm2",
    "T4": "t4",
    "P100": "p100_pcie_16gb",
}

DEEPBENCH_NAME = re.compile(r"^DeepBench_NV_(?P<gpu>[A-Za-z0-9]+)__Results_(?P<sheet>.+)\.csv$")


def fmt_float(x):
    """Fixed 4-decimal rendering without trailing zeros (0.1 ns resolution for microseconds)."""
    s = "%.4f" % x
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def short_kernel(name):
    """'void at::native::elementwise_kernel<128, 2, ...>(...)' -> 'elementwise_kernel'."""
    name = name.strip()
    if name.startswith("void "):
        name = name[5:]
    name = re.split(r"[<(]", name, 1)[0].strip()
    return name.split("::")[-1]


def warn(msg):
    sys.stderr.write("curate_gemm_data: " + msg + "\n")


# ---------------------------------------------------------------------------------------------
# NeuSight
# ---------------------------------------------------------------------------------------------

def read_neusight(src):
    """Yield (file_key, row_dict) for every usable NeuSight bmm/linear row."""
    stats = {}
    for op in ("bmm", "linear"):
        for path in sorted(glob.glob(os.path.join(src, "neusight", op, "*.csv"))):
            stem = os.path.splitext(os.path.basename(path))[0]
            gpu_tag = re.sub(r"^(NVIDIA|Tesla)_", "", stem)
            kept = dropped = 0
            with open(path, newline="") as fh:
                for r in csv.DictReader(fh):
                    device = r["Device"].strip()
                    hw = NEUSIGHT_HW.get(device)
                    if hw is None:
                        raise SystemExit("unknown NeuSight device %r in %s" % (device, path))
                    if r["OPName"].strip() != op:
                        raise SystemExit("unexpected OPName %r in %s" % (r["OPName"], path))
                    try:
                        B, M, N, K = (int(r[c]) for c in ("B", "M", "N", "K"))
                        ms = float(r["Latency"])
                    except (ValueError, TypeError):
                        dropped += 1
                        continue
                    if not (ms > 0.0) or min(B, M, N, K) <= 0:
                        dropped += 1
                        continue
                    if op == "bmm":
                        # torch.bmm((B,M,N), (B,N,K)) -> C (B,M,K): inner dim is the collector's N.
                        batch, m, n, k, ta, tb, bias = B, M, K, N, 0, 0, 0
                    else:
                        # nn.Linear(N, K, bias=True) on (B,M,N): rows B*M, inner N, columns K;
                        # y = x W^T + b with W stored [K, N] = [n, k] -> transpose_b.
                        batch, m, n, k, ta, tb, bias = 1, B * M, K, N, 0, 1, 1
                    # `Kernel Name` is the main (GEMM) kernel; any other kernels of the call
                    # (split-K reduction, PyTorch elementwise copy) are appended as '+short_name'.
                    kname = r["Kernel Name"].strip()
                    others = [k_ for k_ in r.get("Kernels", "").split(";") if k_.strip()]
                    extra = []
                    for kk in others:
                        if kk.strip() == kname or kk.strip().lower() == kname.lower():
                            continue
                        extra.append(short_kernel(kk))
                    kernel = "+".join([kname] + extra)
                    # The GEMM kernel's launch block as recorded (Block x, y, z): the threads
                    # of one CTA, which the kernel name does not give (cuBLAS's 128x32 and
                    # 32x128 SIMT kernels run 256 threads, not the 64 of 8x8 thread tiles).
                    try:
                        threads = int(r["Block x"]) * int(r["Block y"]) * int(r["Block z"])
                    except (KeyError, ValueError, TypeError):
                        threads = ""
                    if threads != "" and not (0 < threads <= 1024):
                        threads = ""
                    # The launch grid's z is the batch times the K slices the GEMM kernel
                    # splits K into (1: whole K per CTA); a grid that is not a multiple of
                    # the batch is left out.
                    try:
                        gz = int(r["Grid z"])
                        split = gz // B if gz % B == 0 and gz >= B else ""
                    except (KeyError, ValueError, TypeError):
                        split = ""
                    row = {
                        "hardware": hw, "dtype": "fp32", "batch": batch, "m": m, "n": n, "k": k,
                        "transpose_a": ta, "transpose_b": tb, "bias": bias,
                        "latency_us": ms * 1000.0, "energy_j": "", "clock_mhz": "",
                        "kernel": kernel, "source": "neusight:%s/%s" % (op, gpu_tag),
                        "threads_per_cta": threads, "split_k": split,
                    }
                    kept += 1
                    yield "neusight_%s_%s.csv" % (op, hw), row
            stats[path] = (kept, dropped)
    for path, (kept, dropped) in sorted(stats.items()):
        if dropped:
            warn("%s: dropped %d unusable rows" % (path, dropped))


# ---------------------------------------------------------------------------------------------
# DeepBench
# ---------------------------------------------------------------------------------------------

def deepbench_dtype(precision_text, sheet):
    """dtype of the GEMM section, from the sheet's own `Precision` line (checked vs file name)."""
    t = precision_text.lower()
    if "int8" in t:
        return "int8"          # "GEMM, Conv: Int8 multiplication, 32 bit accumulation"
    if "16 bit inputs" in t:
        return "fp16"          # fp16 storage; accumulate (and on P100 multiply) in fp32
    if t.strip() == "float":
        return "fp32"
    raise SystemExit("DeepBench sheet %s: unrecognised precision %r" % (sheet, precision_text))


def read_deepbench(src):
    base = os.path.join(src, "deepbench", "csv_converted")
    paths = sorted(glob.glob(os.path.join(base, "**", "*.csv"), recursive=True))
    for path in paths:
        fname = os.path.basename(path)
        if fname.endswith("__Specs.csv"):
            continue
        mt = DEEPBENCH_NAME.match(fname)
        if not mt:
            warn("skipping %s (not a DeepBench results sheet)" % path)
            continue
        phase = os.path.basename(os.path.dirname(path))      # train | inference
        gpu, sheet = mt.group("gpu"), mt.group("sheet")
        hw = DEEPBENCH_HW.get(gpu)
        if hw is None:
            warn("skipping %s (GPU %s has no opmodel built-in)" % (path, gpu))
            continue
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
        precision = ""
        for r in rows:
            if r and r[0].strip() == "Precision":
                precision = r[1] if len(r) > 1 else ""
                break
        hdr_i = next((i for i, r in enumerate(rows)
                      if r and r[0].strip() == "Dense Matrix Multiplication"), None)
        if hdr_i is None:
            warn("skipping %s (no dense GEMM section)" % path)
            continue
        hdr = [h.strip() for h in rows[hdr_i]]
        if "Time (msec)" not in hdr:
            warn("skipping %s (GEMM section has no time column)" % path)
            continue
        dtype = deepbench_dtype(precision, fname)
        ci = {name: hdr.index(name) for name in ("M", "N", "K", "A Transpose", "B Transpose",
                                                  "Time (msec)")}
        pad_i = hdr.index("Padded Kernels") if "Padded Kernels" in hdr else None
        tag = "deepbench:%s/%s/%s" % (phase, gpu, sheet)
        out_name = "deepbench_%s_%s.csv" % (hw, dtype)
        kept = dropped = 0
        for r in rows[hdr_i + 1:]:
            if r and r[0].strip():
                break                                    # next section (Sparse, Convolution, ...)
            if len(r) <= max(ci.values()) or not r[ci["M"]].strip():
                continue                                 # blank separator row
            try:
                M, N, K = (int(float(r[ci[c]])) for c in ("M", "N", "K"))
                ms = float(r[ci["Time (msec)"]])
            except ValueError:
                dropped += 1
                continue
            if not (ms > 0.0) or min(M, N, K) <= 0:
                dropped += 1
                continue
            at = r[ci["A Transpose"]].strip().upper()
            bt = r[ci["B Transpose"]].strip().upper()
            if at not in ("N", "T") or bt not in ("N", "T"):
                raise SystemExit("%s: bad transpose flags %r %r" % (path, at, bt))
            padded = pad_i is not None and len(r) > pad_i and r[pad_i].strip() in ("1", "1.0")
            if padded:
                M = (M + 3) // 4 * 4        # gemm_bench pads the cuBLAS m to a multiple of 4 (int8)
            # column-major (M,N,K,a_t,b_t) == row-major (m=N, n=M, k=K, ta=b_t, tb=a_t)
            row = {
                "hardware": hw, "dtype": dtype, "batch": 1, "m": N, "n": M, "k": K,
                "transpose_a": int(bt == "T"), "transpose_b": int(at == "T"), "bias": 0,
                "latency_us": ms * 1000.0, "energy_j": "", "clock_mhz": "", "kernel": "",
                "source": tag + ("/padded" if padded else ""), "threads_per_cta": "", "split_k": "",
            }
            kept += 1
            yield out_name, row
        if dropped:
            warn("%s: dropped %d rows with missing/zero/negative time" % (path, dropped))


# ---------------------------------------------------------------------------------------------

def sort_key(row):
    return (row["hardware"], row["dtype"], row["batch"], row["m"], row["n"], row["k"],
            row["transpose_a"], row["transpose_b"], row["bias"], row["latency_us"],
            row["kernel"], row["source"])


def write_file(path, rows, columns=None, key=None):
    """Writes rows (dicts) sorted by key with the given header, through a temporary file; the
    count. curate_tc_data.py writes its files with it too."""
    columns = columns or COLUMNS
    rows = sorted(rows, key=key or sort_key)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            out = dict(r)
            out["latency_us"] = fmt_float(r["latency_us"])
            w.writerow([out[c] for c in columns])
    os.replace(tmp, path)
    return len(rows)


def main(argv=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(root, "..", "shared", "data", "measured"),
                    help="measured-data folder (default: ../shared/data/measured)")
    ap.add_argument("--out", default=os.path.join(root, "data", "gemm"),
                    help="output folder (default: data/gemm)")
    args = ap.parse_args(argv)
    src = os.path.normpath(args.src)
    out = os.path.normpath(args.out)
    for sub in ("neusight", "deepbench"):
        if not os.path.isdir(os.path.join(src, sub)):
            raise SystemExit("missing %s" % os.path.join(src, sub))
    os.makedirs(out, exist_ok=True)

    files = {}
    for gen in (read_neusight(src), read_deepbench(src)):
        for name, row in gen:
            files.setdefault(name, []).append(row)

    # Remove generated files of an earlier run that this run no longer produces.
    for stale in sorted(glob.glob(os.path.join(out, "neusight_*.csv")) +
                        glob.glob(os.path.join(out, "deepbench_*.csv"))):
        if os.path.basename(stale) not in files:
            os.remove(stale)

    total = 0
    for name in sorted(files):
        n = write_file(os.path.join(out, name), files[name])
        total += n
        print("%-40s %7d rows" % (name, n))
    print("%-40s %7d rows" % ("total", total))

    for sub, dest in (("neusight", "LICENSE.neusight"), ("deepbench", "LICENSE.deepbench")):
        shutil.copyfile(os.path.join(src, sub, "LICENSE"), os.path.join(out, dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
