#!/usr/bin/env python3
"""Where a GPU's few-row GEMMs (2 <= m <= 16) run one unsplit K loop, from measured times alone.

Reads the per-row CSV of `opmodel validate-gemm-latency --no-calibrate-fixed-overhead --output-csv F`
and, for one hardware and dtype, fits  t = a + b * k  (least squares) over the few-row rows of the
(n, k) shapes given with --hole (default: the L40S shapes docs/gemm_models.md names), then reports
every few-row row (n <= --max-n) whose time lies within --tol of that line (a K loop of fixed cost per K element,
whatever m and n: one CTA column of a narrow tile, unsplit) against m*n*k, to see which size bound
separates them from the split-K rows.  The model's own prediction is not used to select rows.
Standard library only.

Usage (from the repository root):
  python3 tools/gemm_small_m_study.py F [--hardware l40s] [--dtype bf16] [--tol 0.15] [--max-n 256]
"""
import argparse
import csv
import collections


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--hardware", default="l40s")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--tol", type=float, default=0.15)
    ap.add_argument("--max-n", type=int, default=256,
                    help="only shapes whose n fits one or a few narrow tile columns (default 256)")
    ap.add_argument("--hole", action="append",
                    help="n,k of a shape whose few-row rows define the line (repeatable)")
    a = ap.parse_args()
    holes = [tuple(int(x) for x in h.split(",")) for h in a.hole] if a.hole else \
        [(32, 2048), (32, 3584), (64, 1536)]
    rows = []
    for r in csv.DictReader(open(a.csv)):
        if r["hardware"] != a.hardware or r["dtype"] != a.dtype or ":eager" in r["group"]:
            continue
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        if 2 <= m <= 16 and r["batch"] == "1" and n <= a.max_n:
            rows.append((m, n, k, float(r["measured_us"])))
    fit = [(k, t) for m, n, k, t in rows if (n, k) in holes]
    if len(fit) < 2:
        raise SystemExit("no few-row rows of the --hole shapes for %s %s" % (a.hardware, a.dtype))
    mk = sum(k for k, _ in fit) / len(fit)
    mt = sum(t for _, t in fit) / len(fit)
    b = sum((k - mk) * (t - mt) for k, t in fit) / sum((k - mk) ** 2 for k, _ in fit)
    c = mt - b * mk
    res = sorted(abs((c + b * k) / t - 1) for k, t in fit)
    print("%s %s: t = %.2f us + %.3f ns * k over %d rows of %s (median |residual| %.1f%%)"
          % (a.hardware, a.dtype, c, b * 1e3, len(fit), holes, 100 * res[len(res) // 2]))
    on = collections.defaultdict(list)
    off = collections.defaultdict(list)
    for m, n, k, t in rows:
        line = c + b * k
        (on if abs(line / t - 1) <= a.tol and line > 1.5 * (c + b * 32) else off)[(n, k)].append(m)
    print("shapes (n, k) whose few-row rows lie on the line: m values, and max m*n*k on / min m*n*k off")
    for nk in sorted(on):
        ms = sorted(on[nk])
        offm = sorted(off.get(nk, []))
        print("  n=%-5d k=%-6d on m=%s  max mnk on %d  min mnk off %s" % (
            nk[0], nk[1], ",".join(map(str, ms)), max(ms) * nk[0] * nk[1],
            min(offm) * nk[0] * nk[1] if offm else "-"))
    print("rows on the line: %d of %d few-row rows" % (sum(len(v) for v in on.values()), len(rows)))


if __name__ == "__main__":
    main()
