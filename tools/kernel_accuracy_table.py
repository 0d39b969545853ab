#!/usr/bin/env python3
"""Per-(kind, hardware) accuracy of the kernel models on the general measurement JSONL (data/kernels).

Runs `opmodel validate --data DIR --output-csv` (uncalibrated: the built-in entries as shipped, the
host dispatch on `timing: events` lines as validate adds it) and groups the per-line CSV by kind and
hardware; elementwise lines are split by their function (`op`), so Vidur's add, gelu and SiLU-and-mul
show apart. Prints MAPE %, geomean predicted/measured and the limiting resources. Standard library only.

Usage (from the repository root, after building):
  python3 tools/kernel_accuracy_table.py [--data data/kernels] [--bin build/src/cli/opmodel]
                                         [--model M] [--attention] [-- extra validate arguments]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="data/kernels")
    ap.add_argument("--bin", default="build/src/cli/opmodel")
    ap.add_argument("--model", default="extended_roofline")
    ap.add_argument("--attention", action="store_true", help="include the attention kinds")
    ap.add_argument("extra", nargs="*", help="more validate arguments (after --)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.csv")
        subprocess.run([a.bin, "validate", "--data", a.data, "--model", a.model, "--output-csv", out] + a.extra,
                       check=True, stdout=subprocess.DEVNULL)
        rows = list(csv.DictReader(open(out)))
    files = {}
    groups = collections.defaultdict(list)
    for r in rows:
        kind = r["kind"]
        if kind.startswith("attention") and not a.attention:
            continue
        if kind == "elementwise":
            if r["file"] not in files:
                files[r["file"]] = open(r["file"]).read().splitlines()
            kind += ":" + json.loads(files[r["file"]][int(r["line"]) - 1])["op"].get("op", "")
        m, p = float(r["measured_latency_s"]), float(r["predicted_latency_s"])
        groups[(kind, r["hardware"])].append((m, p, r["limiting"]))
    print("| kind | hardware | lines | MAPE % | geomean | limiting |")
    print("|---|---|---:|---:|---:|---|")
    for (kind, hw), v in sorted(groups.items()):
        mape = 100 * sum(abs(p - m) / m for m, p, _ in v) / len(v)
        gm = math.exp(sum(math.log(p / m) for m, p, _ in v) / len(v))
        lim = collections.Counter(l for _, _, l in v).most_common(3)
        print("| %s | %s | %d | %.1f | %.2f | %s |" % (kind, hw, len(v), mape, gm, ", ".join("%s %d" % x for x in lim)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
