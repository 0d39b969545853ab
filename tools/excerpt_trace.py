#!/usr/bin/env python3
"""Cut a small test trace out of a large PyTorch profiler trace.

    tools/excerpt_trace.py IN.json.gz OUT.json.gz OPNAME [OPNAME ...]

Keeps every top-level cpu_op whose name is one of OPNAME (an op of that name
not nested in another kept one) with every host event nested in it on its
thread, the GPU events those launches queued (same correlation id), their
ac2g flow ends, and deviceProperties.  The kept events are copied unchanged,
so each kept op's call tree, kernels and timestamps are exactly the
original's: a reference report's rows for those ops still apply.
"""
import gzip, json, sys

HOST = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
GPU = {"kernel", "gpu_memcpy", "gpu_memset"}


def main():
    src, dst, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    with gzip.open(src, "rt") as f:
        d = json.load(f)
    ev = [e for e in d["traceEvents"] if e.get("ph") in ("X", "s", "f")]
    roots = sorted((e for e in ev if e.get("cat") == "cpu_op" and e["name"] in names),
                   key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"]))
    spans = []
    for e in roots:
        if spans and spans[-1][:2] == (e["pid"], e["tid"]) and e["ts"] < spans[-1][3]:
            continue  # nested in a kept op of the same name: kept with it
        spans.append((e["pid"], e["tid"], e["ts"], e["ts"] + e["dur"]))
    keep, corr = [], set()
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in HOST and any(
                (e["pid"], e["tid"]) == s[:2] and s[2] <= e["ts"] < s[3] for s in spans):
            keep.append(e)
            if e.get("cat") in ("cuda_runtime", "cuda_driver"):
                corr.add(e.get("args", {}).get("correlation"))
    corr.discard(None)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in GPU and e.get("args", {}).get("correlation") in corr:
            keep.append(e)
        elif e.get("cat") == "ac2g" and e.get("id") in corr:
            keep.append(e)
    out = {"deviceProperties": d.get("deviceProperties", []), "traceEvents": keep}
    with gzip.open(dst, "wt") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{len(spans)} ops, {len(keep)} events", file=sys.stderr)


if __name__ == "__main__":
    main()
