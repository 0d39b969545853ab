#!/usr/bin/env python3
"""bench/make_big_trace.py — writes a large torch.profiler trace for the trace
benchmark by replicating the events of the shipped traces with new ids.

Each copy of a source trace gets its own ids and its own stretch of time, so
the copies do not collide when linked:

  * every "ts" is shifted (exactly, in integer nanoseconds, written back as
    microseconds with three decimals) so that the copies follow one another
    on one time axis, 1 ms apart;
  * args "correlation", "External id" and "Sequence number", and the "id" of
    flow events (ph s/f/t), are shifted by (copy number) x 10^9.

Everything else is copied as the profiler wrote it: by default each event's
original text (kineto's pretty-printed layout, which is what real traces
look like); with --compact each event is re-serialised on one line with
single spaces, about 15 % denser, which makes more JSON tokens per byte and
so a slower file to parse.  The copies go round-robin over the source traces
until the file reaches --size-mb (10^6 bytes).  The top-level keys around
traceEvents (deviceProperties, ...) are the first source trace's.

usage: bench/make_big_trace.py [--size-mb 1100] [--out /tmp/opm_big_trace.json]
                               [--traces DIR] [--compact] [--gzip]
"""
import argparse
import decimal
import glob
import gzip
import json
import os
import re
import sys

ID_STRIDE = 10**9
GAP_NS = 1_000_000
ID_ARGS = ("correlation", "External id", "Sequence number")
# A number value of one of the keys that get shifted.
HOLE = re.compile(r'"(ts|id|correlation|External id|Sequence number)"(\s*:\s*)(-?[0-9][0-9.eE+-]*)')
EVENTS = re.compile(r'"traceEvents"\s*:\s*\[')


def us_to_ns(text):
    """Microseconds (number text) to integer ns, half away from zero."""
    d = decimal.Decimal(text) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def ns_text(ns):
    """Integer ns as microseconds with three decimals, as the profiler writes."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return "%s%d.%03d" % (sign, ns // 1000, ns % 1000)


def plain(v):
    """Decimal → float (for json.dumps) everywhere in a value."""
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


class Source:
    """One shipped trace as per-event text templates with holes for the
    shifted values: the text is made once, each copy only fills the holes."""

    def __init__(self, path, compact):
        with gzip.open(path, "rb") as f:
            text = f.read().decode("utf-8")
        m = EVENTS.search(text)
        if not m:
            sys.exit("make_big_trace.py: %s: no traceEvents" % path)
        self.head = text[:m.end()]
        dec = json.JSONDecoder(parse_float=decimal.Decimal)
        self.templates = []     # (pieces, holes): len(pieces) == len(holes) + 1
        t0 = t1 = None
        i = m.end()
        ws = re.compile(r"[\s,]*")
        while True:
            i = ws.match(text, i).end()
            if text[i] == "]":
                break
            ev, end = dec.raw_decode(text, i)
            ev_text = text[i:end]
            i = end
            if compact:
                ev_text = json.dumps(plain(ev), separators=(", ", ": "), ensure_ascii=False)
            pieces, holes, pos = [], [], 0
            for h in HOLE.finditer(ev_text):
                key, value = h.group(1), h.group(3)
                if key == "ts":
                    if not isinstance(ev.get("ts"), (int, decimal.Decimal)):
                        continue
                    hole = ("ts", us_to_ns(value))
                elif key == "id":
                    if ev.get("ph") not in ("s", "f", "t") or not isinstance(ev.get("id"), int):
                        continue
                    hole = ("id", int(value))
                else:
                    args = ev.get("args") or {}
                    if not isinstance(args.get(key), int) or str(args[key]) != value:
                        continue
                    hole = ("id", int(value))
                pieces.append(ev_text[pos:h.start(3)])
                holes.append(hole)
                pos = h.end(3)
            pieces.append(ev_text[pos:])
            if isinstance(ev.get("ts"), (int, decimal.Decimal)):
                ts = us_to_ns(str(ev["ts"]))
                if sum(1 for k, v in holes if k == "ts") != 1 or ("ts", ts) not in holes:
                    sys.exit("make_big_trace.py: %s: cannot place ts in %s" % (path, ev_text[:200]))
                dur = ev.get("dur")
                end_ns = ts + (us_to_ns(str(dur)) if isinstance(dur, (int, decimal.Decimal)) else 0)
                t0 = ts if t0 is None else min(t0, ts)
                t1 = end_ns if t1 is None else max(t1, end_ns)
            self.templates.append((pieces, holes))
        self.tail = text[i + 1:]
        self.t0 = t0 or 0
        self.span_ns = (t1 or 0) - self.t0

    def write_copy(self, out, time_shift_ns, id_shift, first):
        for n, (pieces, holes) in enumerate(self.templates):
            parts = ["\n  "] if first and n == 0 else [",\n  "]
            for i, (kind, value) in enumerate(holes):
                parts.append(pieces[i])
                parts.append(ns_text(value + time_shift_ns) if kind == "ts" else str(value + id_shift))
            parts.append(pieces[-1])
            out.write("".join(parts))
        return len(self.templates)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=1100, help="stop once the file has this many MB (10^6 bytes)")
    ap.add_argument("--out", default="/tmp/opm_big_trace.json")
    ap.add_argument("--traces", default=os.path.join(here, "..", "tests", "data", "traces"),
                    help="folder of <name>/trace.json.gz source traces")
    ap.add_argument("--compact", action="store_true", help="one event per line instead of the original layout")
    ap.add_argument("--gzip", action="store_true", help="also write OUT.gz (level 1)")
    a = ap.parse_args()

    paths = sorted(glob.glob(os.path.join(a.traces, "*", "trace.json.gz")))
    if not paths:
        sys.exit("make_big_trace.py: no traces under %s" % a.traces)
    sources = [Source(p, a.compact) for p in paths]
    target = int(a.size_mb * 1e6)

    copies = events = 0
    cursor = min(s.t0 for s in sources)
    with open(a.out, "w", encoding="utf-8") as out:
        out.write(sources[0].head)
        while out.tell() < target:
            for s in sources:
                events += s.write_copy(out, cursor - s.t0, (copies + 1) * ID_STRIDE, events == 0)
                cursor += s.span_ns + GAP_NS
                copies += 1
                if out.tell() >= target:
                    break
        out.write("\n  ]")
        out.write(sources[0].tail)
        size = out.tell()
    print("%s: %d bytes, %d events, %d trace copies" % (a.out, size, events, copies))
    if a.gzip:
        with open(a.out, "rb") as f, gzip.open(a.out + ".gz", "wb", compresslevel=1) as g:
            while True:
                b = f.read(1 << 22)
                if not b:
                    break
                g.write(b)
        print("%s.gz: %d bytes" % (a.out, os.path.getsize(a.out + ".gz")))


if __name__ == "__main__":
    main()
