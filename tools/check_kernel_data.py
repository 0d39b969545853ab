#!/usr/bin/env python3
"""Check that every measurement in data/kernels/*.jsonl predicts without error.

For each file and hardware, strips the lines to their "op" into a temporary JSONL, runs
  opmodel predict --hardware H --batch TMP --model MODEL
and counts the error lines. Also prints, per file and hardware, the geometric mean and the median
of predicted / measured latency (a second opinion on the mapping, not a model score).
Exit status 1 if any line failed. Standard library only.

Usage (from the repository root, after `meson compile -C build`):
  python3 tools/check_kernel_data.py [--data data/kernels] [--opmodel build/src/cli/opmodel]
                                     [--model extended_roofline]
"""

import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join("data", "kernels"))
    ap.add_argument("--opmodel", default=os.path.join("build", "src", "cli", "opmodel"))
    ap.add_argument("--model", default="extended_roofline")
    args = ap.parse_args(argv)

    failed = 0
    total = 0
    print("%-28s %-16s %7s %6s %8s %8s" % ("file", "hardware", "lines", "errors", "geomean",
                                          "median"))
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(args.data, "*.jsonl"))):
            by_hw = {}
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    rec = json.loads(line)
                    by_hw.setdefault(rec["hardware"], []).append((n, rec))
            for hw in sorted(by_hw):
                recs = by_hw[hw]
                ops = os.path.join(tmp, "ops.jsonl")
                with open(ops, "w", encoding="utf-8") as f:
                    for _, rec in recs:
                        f.write(json.dumps(rec["op"]) + "\n")
                res = subprocess.run([args.opmodel, "predict", "--hardware", hw, "--batch", ops,
                                      "--model", args.model],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                outs = res.stdout.splitlines()
                errors = 0
                ratios = []
                if len(outs) != len(recs):
                    print("%s %s: %d predictions for %d lines (exit %d): %s"
                          % (path, hw, len(outs), len(recs), res.returncode,
                             res.stderr.strip()[:500]))
                    errors = len(recs)
                else:
                    for (n, rec), out in zip(recs, outs):
                        pred = json.loads(out)
                        if "error" in pred:
                            errors += 1
                            if errors <= 5:
                                print("  %s line %d: %s" % (path, n, pred["error"]))
                            continue
                        ratios.append(pred["latency_s"] / rec["measured"]["latency_s"])
                if errors == 0 and res.returncode != 0:
                    print("  %s %s: exit %d: %s" % (path, hw, res.returncode, res.stderr[:500]))
                    errors = len(recs)
                gm = (math.exp(sum(math.log(r) for r in ratios) / len(ratios))
                      if ratios else float("nan"))
                med = statistics.median(ratios) if ratios else float("nan")
                print("%-28s %-16s %7d %6d %8.3f %8.3f"
                      % (os.path.basename(path), hw, len(recs), errors, gm, med))
                failed += errors
                total += len(recs)
    print("%d lines, %d errors" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
