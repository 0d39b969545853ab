#!/usr/bin/env python3
"""Accuracy of the GEMM model with the kernel that ran (hinted) against its own
kernel choice (auto), on traces: per trace and overall, the mean absolute
percentage error of each against the measured mean kernel time, over the
GEMM groups `opmodel trace report --kernel-hints` lists, and how many groups
the hint brings closer.  Nothing is fitted: both are the uncalibrated model.

usage: tools/kernel_hint_accuracy.py OPMODEL TRACE... [--model NAME]
"""
import json
import subprocess
import sys


def main():
    args = sys.argv[1:]
    model = []
    if "--model" in args:
        i = args.index("--model")
        model = ["--model", args[i + 1]]
        del args[i:i + 2]
    exe, traces = args[0], args[1:]
    tot = {"n": 0, "h": 0.0, "a": 0.0, "closer": 0}
    print(f"{'trace':<58} {'groups':>6} {'hinted MAPE':>12} {'auto MAPE':>10} {'hint closer':>12}")
    for t in traces:
        out = subprocess.run([exe, "trace", "report", t, "--kernel-hints", "--format", "json"] + model,
                             capture_output=True, text=True, check=True).stdout
        ks = json.loads(out)["kernel_hints"]
        if not ks:
            print(f"{t:<58} {0:>6} {'-':>12} {'-':>10} {'-':>12}")
            continue
        eh = [abs(k["hinted_time_s"] - k["measured_mean_s"]) / k["measured_mean_s"] for k in ks]
        ea = [abs(k["auto_time_s"] - k["measured_mean_s"]) / k["measured_mean_s"] for k in ks]
        closer = sum(h < a for h, a in zip(eh, ea))
        print(f"{t:<58} {len(ks):>6} {100 * sum(eh) / len(ks):>11.1f}% {100 * sum(ea) / len(ks):>9.1f}% "
              f"{closer:>6}/{len(ks):<5}")
        tot["n"] += len(ks)
        tot["h"] += sum(eh)
        tot["a"] += sum(ea)
        tot["closer"] += closer
    if tot["n"]:
        print(f"{'all':<58} {tot['n']:>6} {100 * tot['h'] / tot['n']:>11.1f}% {100 * tot['a'] / tot['n']:>9.1f}% "
              f"{tot['closer']:>6}/{tot['n']:<5}")


if __name__ == "__main__":
    main()
