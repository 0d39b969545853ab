#!/usr/bin/python3
"""artifact_table.py — validate-artifact's scores per measurement file (GPU set) and model family,
uncalibrated (the default host's launch interval) first, then calibrated, from the CSV it writes:

    build/src/cli/opmodel validate-artifact --output-csv /tmp/art.csv > /dev/null
    /usr/bin/python3 tools/artifact_table.py /tmp/art.csv

Prints MAPE % of time, energy and power (energy / time) and the geomean predicted/measured ratios, for
every (file, family) cell, every file, every file without the vision families (resnet101, vitmodel,
mobilevitmodel: their kernel lists leave out batch norms, pooling and residual adds, which
validate-artifact adds from the named architecture unless --as-listed, and layout transposes,
docs/workload.md) and all scored runs.  A reading aid: it computes nothing the
prediction uses.
"""
import collections
import csv
import math
import sys

VISION = {"resnet101", "vitmodel", "mobilevitmodel"}


def stats(rows, tk, ek):
    t = e = p = lt = le = 0.0
    for r in rows:
        tm, em = float(r["measured_time_s"]), float(r["measured_energy_j"])
        tp, ep = float(r[tk]), float(r[ek])
        t += abs(tp / tm - 1)
        e += abs(ep / em - 1)
        p += abs((ep / tp) / (em / tm) - 1)
        lt += math.log(tp / tm)
        le += math.log(ep / em)
    n = len(rows)
    return n, 100 * t / n, 100 * e / n, 100 * p / n, math.exp(lt / n), math.exp(le / n)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: artifact_table.py VALIDATE_ARTIFACT.csv")
    rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "scored"]
    groups = collections.OrderedDict()
    for f in sorted({r["file"] for r in rows}):
        fr = [r for r in rows if r["file"] == f]
        groups[f] = fr
        groups[f + " language models"] = [r for r in fr if r["family"] not in VISION]
        groups[f + " vision models"] = [r for r in fr if r["family"] in VISION]
        for fam in sorted({r["family"] for r in fr}):
            groups["  %s %s" % (f, fam)] = [r for r in fr if r["family"] == fam]
    groups["all"] = rows
    groups["all language models"] = [r for r in rows if r["family"] not in VISION]
    for label, tk, ek in (("uncalibrated (default host interval)", "uncalibrated_time_s", "uncalibrated_energy_j"),
                          ("calibrated launch interval", "predicted_time_s", "predicted_energy_j")):
        print(label)
        print("%-52s %4s %7s %7s %7s %7s %7s" % ("set", "runs", "time%", "energy%", "power%", "t-ratio", "e-ratio"))
        for g, gr in groups.items():
            if gr:
                print("%-52s %4d %7.2f %7.2f %7.2f %7.3f %7.3f" % ((g,) + stats(gr, tk, ek)))
        print()


if __name__ == "__main__":
    main()
