#!/usr/bin/env python3
"""graph_match.py — how much of a TraceLens reference report's kernel time our
report reproduces: reference rows summed by TraceLens's five-string key (name,
Input Dims, Input type, Input Strides, Concrete Inputs), compared with our
groups (`opmodel trace report --format csv`) by the same key; a key matches when
count and kernel time (to 0.01 us) agree.  Prints the share matched and the
share left in graph-launch rows (names containing GraphLaunch).

usage: tools/graph_match.py OUR_GROUPS.csv unified_perf_summary.csv [-v] [--tracelens-names]
  --tracelens-names: compare sglang_profiler::<name>_<digits> as TraceLens names it"""
import csv, json, re, sys


def norm_ref(s):
    # TraceLens writes Python tuples ((32, 4096), ('c10::BFloat16', '')); ours is compact JSON.
    s = (s or "").replace("(", "[").replace(")", "]").replace("'", '"')
    s = re.sub(r"\s", "", s)
    return re.sub(r",\]", "]", s)


def norm_ours(s):
    return re.sub(r"\s", "", s or "")


def main():
    ours, ref = {}, {}
    for g in csv.DictReader(open(sys.argv[1])):
        name = g["name"]
        if "--tracelens-names" in sys.argv and name.startswith("sglang_profiler::"):
            # TraceLens drops sglang_profiler's _<digits> suffix (docs/trace.md).
            name = re.sub(r"_[0-9]+$", "", name)
        k = (name,) + tuple(norm_ours(g[c]) for c in ("input_dims", "input_types", "input_strides", "concrete_inputs"))
        c, t = ours.get(k, (0, 0.0))
        ours[k] = (c + int(g["count"]), t + float(g["kernel_time_s"]) * 1e6)
    for r in csv.DictReader(open(sys.argv[2])):
        t = float(r.get("Kernel Time (µs)_sum") or 0)
        if t <= 0:
            continue
        k = (r["name"],) + tuple(norm_ref(r[c]) for c in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"))
        c, tt = ref.get(k, (0, 0.0))
        ref[k] = (c + int(float(r["operation_count"])), tt + t)
    total = sum(t for _, t in ref.values())
    ok = sum(t for k, (c, t) in ref.items() if k in ours and ours[k][0] == c and abs(ours[k][1] - t) <= 0.01 + 1e-6 * t)
    gl = sum(t for k, (c, t) in ours.items() if "GraphLaunch" in k[0])
    print(json.dumps({"reference_kernel_us": round(total, 3), "matched_pct": round(100 * ok / total, 2),
                      "graph_launch_pct": round(100 * gl / total, 2)}))
    if "-v" in sys.argv:
        for k, (c, t) in sorted(ref.items(), key=lambda x: -x[1][1]):
            o = ours.get(k)
            if not (o and o[0] == c and abs(o[1] - t) <= 0.01 + 1e-6 * t):
                print("miss", round(t, 3), c, o, k[0], k[1][:60], k[4][:40])


main()
