#!/usr/bin/python3
"""active_power_fit.py — the fit of energy.c's ACTIVE_POWER_FRACTION and its held-out scores
(docs/energy.md, "Active base power").

The fit set is the A100 PCIe 900 MHz EnergAIzer runs (a100_40gb_pcie_e2e) whose workload name has an
even CRC-32; everything else (the odd-CRC half of that set, the A10, every A100 DVFS clock) is held
out.  Predicted energy is linear in the fraction phi while the TDP limit on the active power does not
bind (it binds on none of the fit runs at 900 MHz, even at phi = 1), so two builds, at phi = 0 and
phi = 1, give it in closed form: least squares of the relative *power* error (power = energy / time, so the time error does
not leak into phi) over the fit runs, on the calibrated-launch-interval predictions.

    meson setup build-phi0 -Db_lto=false -Dc_args=-DACTIVE_POWER_FRACTION=0 && meson compile -C build-phi0
    meson setup build-phi1 -Db_lto=false -Dc_args=-DACTIVE_POWER_FRACTION=1 && meson compile -C build-phi1
    build-phi0/src/cli/opmodel validate-artifact --output-csv /tmp/phi0.csv > /dev/null
    build-phi1/src/cli/opmodel validate-artifact --output-csv /tmp/phi1.csv > /dev/null
    /usr/bin/python3 tools/active_power_fit.py --fit /tmp/phi0.csv /tmp/phi1.csv

Leave-one-GPU-out check (the A100 left out: the fit on the A10's even-CRC runs instead, and the
phi it gives scored on every A100 run by linear interpolation between the two builds, exact where
the TDP limit does not bind, i.e. every 900 MHz run):

    /usr/bin/python3 tools/active_power_fit.py --fit-on a10_e2e /tmp/phi0.csv /tmp/phi1.csv

Scores of one build (the shipped one), fit and held-out sets apart, uncalibrated first:

    build/src/cli/opmodel validate-artifact --output-csv /tmp/art.csv > /dev/null
    /usr/bin/python3 tools/active_power_fit.py /tmp/art.csv
"""
import collections
import csv
import sys
import zlib

FIT_FILE = "a100_40gb_pcie_e2e"


def in_fit(r, fit_file=FIT_FILE):
    return r["file"] == fit_file and zlib.crc32(r["workload"].encode()) % 2 == 0


def scored(path):
    return [r for r in csv.DictReader(open(path)) if r["status"] == "scored"]


def fit(phi0, phi1, fit_file=FIT_FILE):
    one = {(r["file"], r["workload"]): r for r in scored(phi1)}
    num = den = 0.0
    n = 0
    for r in scored(phi0):
        if not in_fit(r, fit_file):
            continue
        t = float(r["predicted_time_s"])
        p0 = float(r["predicted_energy_j"]) / t
        p1 = float(one[(r["file"], r["workload"])]["predicted_energy_j"]) / t
        pm = float(r["measured_energy_j"]) / float(r["measured_time_s"])
        x, y = (p1 - p0) / pm, 1 - p0 / pm
        num += x * y
        den += x * x
        n += 1
    print("fit runs %d (%s, even CRC): ACTIVE_POWER_FRACTION = %.4f" % (n, fit_file, num / den))
    return num / den


def held_out(phi0, phi1, fit_file):
    """Fits on fit_file's even-CRC runs and scores every run of the other files at that phi, the
    energies interpolated linearly between the phi = 0 and phi = 1 builds."""
    phi = fit(phi0, phi1, fit_file)
    one = {(r["file"], r["workload"]): r for r in scored(phi1)}
    groups = collections.defaultdict(list)
    for r in scored(phi0):
        if r["file"] == fit_file:
            continue
        groups["%s (held out)" % r["file"]].append((r, one[(r["file"], r["workload"])]))
    for label, (tk, ek) in (("uncalibrated (default host interval)", ("uncalibrated_time_s", "uncalibrated_energy_j")),
                            ("calibrated launch interval", ("predicted_time_s", "predicted_energy_j"))):
        print(label)
        print("%-52s %4s %7s %7s" % ("set", "runs", "energy%", "power%"))
        for g in sorted(groups):
            e = p = 0.0
            for r0, r1 in groups[g]:
                tm, em, tp = float(r0["measured_time_s"]), float(r0["measured_energy_j"]), float(r0[tk])
                ep = (1 - phi) * float(r0[ek]) + phi * float(r1[ek])
                e += abs(ep / em - 1)
                p += abs((ep / tp) / (em / tm) - 1)
            n = len(groups[g])
            print("%-52s %4d %7.2f %7.2f" % (g, n, 100 * e / n, 100 * p / n))
        print()


def scores(path):
    groups = collections.defaultdict(list)
    for r in scored(path):
        if r["file"] == FIT_FILE:
            groups["%s %s" % (r["file"], "fit (even CRC)" if in_fit(r) else "held out (odd CRC)")].append(r)
        else:
            groups["%s (held out)" % r["file"]].append(r)
        if "dvfs" in r["file"]:
            groups["%s %4s MHz (held out)" % (r["file"], r["clock_mhz"])].append(r)
    held = [r for r in scored(path) if not in_fit(r)]
    groups["all held out"] = held
    for label, (tk, ek) in (("uncalibrated (default host interval)", ("uncalibrated_time_s", "uncalibrated_energy_j")),
                            ("calibrated launch interval", ("predicted_time_s", "predicted_energy_j"))):
        print(label)
        print("%-52s %4s %7s %7s %7s" % ("set", "runs", "time%", "energy%", "power%"))
        for g in sorted(groups):
            rows = groups[g]
            t = e = p = 0.0
            for r in rows:
                tm, em = float(r["measured_time_s"]), float(r["measured_energy_j"])
                tp, ep = float(r[tk]), float(r[ek])
                t += abs(tp / tm - 1)
                e += abs(ep / em - 1)
                p += abs((ep / tp) / (em / tm) - 1)
            n = len(rows)
            print("%-52s %4d %7.2f %7.2f %7.2f" % (g, n, 100 * t / n, 100 * e / n, 100 * p / n))
        print()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--fit":
        fit(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "--fit-on":
        held_out(sys.argv[3], sys.argv[4], sys.argv[2])
    elif len(sys.argv) == 2:
        scores(sys.argv[1])
    else:
        sys.exit("usage: active_power_fit.py --fit PHI0.csv PHI1.csv | --fit-on FILE PHI0.csv PHI1.csv | ARTIFACT.csv")


if __name__ == "__main__":
    main()
