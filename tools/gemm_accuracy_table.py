#!/usr/bin/env python3
"""Per-(hardware, dtype, source) accuracy of the GEMM models on a contract section 4 data folder.

Runs `opmodel validate-gemm-latency --data-dir DIR --no-calibrate-fixed-overhead --compare-rooflines
--output-csv` (uncalibrated: the built-in entries as shipped) and groups the per-row CSV by hardware,
dtype and source family (the source tag up to its first ':'). Eagerly timed rows are left out, as the
command leaves them out without calibration. --by-kernel splits every set by the kernel extended_roofline
timed and the resource it names as limiting (the CSV's extended_roofline_kernel and
extended_roofline_limiting_resource columns) and adds, per split, the points of the set's MAPE its rows
carry (rows x MAPE / the set's rows), to find what a set's error is made of. Standard library only.

Usage (from the repository root, after building):
  python3 tools/gemm_accuracy_table.py [--data-dir data/gemm_tc] [--bin build/src/cli/opmodel] [--by-class]
                                       [--by-kernel] [--hardware NAME]
"""
import argparse
import collections
import csv
import math
import os
import subprocess
import sys
import tempfile


def stats(pairs):
    ape = sorted(abs(p / m - 1) * 100 for m, p in pairs)
    gm = math.exp(sum(math.log(p / m) for m, p in pairs) / len(pairs))
    return sum(ape) / len(ape), ape[len(ape) // 2], gm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="data/gemm_tc")
    ap.add_argument("--bin", default="build/src/cli/opmodel")
    ap.add_argument("--by-class", action="store_true", help="also split every set by size class")
    ap.add_argument("--by-kernel", action="store_true",
                    help="also split every set by extended_roofline's kernel and limiting resource")
    ap.add_argument("--hardware", help="only the sets of this hardware")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rows.csv")
        cmd = [a.bin, "validate-gemm-latency", "--data-dir", a.data_dir, "--no-calibrate-fixed-overhead",
               "--compare-rooflines", "--output-csv", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stderr.strip())
        rows = list(csv.DictReader(open(out)))
    models = [c[:-3] for c in rows[0] if c.endswith("_us") and c != "measured_us"]
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        if not r[models[-1] + "_us"] or ":eager" in r["group"]:
            continue  # not predicted, or eagerly timed (not scored without calibration)
        if a.hardware and r["hardware"] != a.hardware:
            continue
        src = r["group"].split("|", 1)[1].split(":")[0]
        keys = [(r["hardware"], r["dtype"], src, "")]
        if a.by_class:
            keys.append((r["hardware"], r["dtype"], src, r["class"]))
        if a.by_kernel:
            lab = "%s %s" % (r.get("extended_roofline_kernel", ""), r.get("extended_roofline_limiting_resource", ""))
            keys.append((r["hardware"], r["dtype"], src, lab.strip() or "-"))
        for k in keys:
            for mo in models:
                groups[k][mo].append((float(r["measured_us"]), float(r[mo + "_us"])))
    if not groups:
        sys.exit("no scored row" + (" of hardware '%s'" % a.hardware if a.hardware else ""))
    pts = " extended pts |" if a.by_kernel else ""
    print("| hardware | dtype | source | class | rows | " + " | ".join("%s MAPE%% (geomean)" % m for m in models) + " |" + pts)
    print("|---|---|---|---|---:|" + "---:|" * len(models) + ("---:|" if a.by_kernel else ""))
    for k in sorted(groups):
        g = groups[k]
        st = [stats(g[m]) for m in models]
        cells = ["%.1f (%.2f)" % (s[0], s[2]) for s in st]
        line = "| %s | %s | %s | %s | %d | %s |" % (k[0], k[1], k[2], k[3] or "all", len(g[models[0]]), " | ".join(cells))
        if a.by_kernel:
            n_set = len(groups[k[:3] + ("",)][models[0]])
            mo = "extended_roofline" if "extended_roofline" in models else models[-1]
            line += " %.2f |" % (st[models.index(mo)][0] * len(g[mo]) / n_set)
        print(line)


if __name__ == "__main__":
    main()
