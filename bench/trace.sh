#!/usr/bin/env bash
# bench/trace.sh — throughput and peak memory of reading (and reporting on) a
# large profiler trace, with Python's json.load of the same file for reference.
#
# Writes a >= 1 GB trace with bench/make_big_trace.py (the shipped traces'
# events replicated with new ids and shifted times) into /tmp, then, pinned
# to one core (taskset), runs
#
#     bench_trace --mode read TRACE      opm_trace_read_file alone
#     bench_trace --mode report TRACE    read + opm_trace_report_new + JSON
#     python3 -c 'import json; json.load(open(TRACE))'  under /usr/bin/time -v
#
# each in its own process (peak RSS is per process), and prints one line per
# measurement: uncompressed MB (10^6 bytes), wall seconds, MB/s, and peak RSS
# (KiB and share of the file).  A benchmark, not a test: it reports figures
# and does not judge them.
#
# usage: bench/trace.sh [BENCH_TRACE_BIN]
#   BENCH_TRACE_BIN  the bench binary (default build/bench/bench_trace)
# environment:
#   TRACE_MB       size of the generated trace in MB (default 1100)
#   TRACE_FILE     where to write it (default /tmp/opm_big_trace.json)
#   TRACE_COMPACT  1: one event per line instead of the profiler's layout
#   TRACE_GZIP     1: also measure the gzip-compressed file (level 1)
#   TRACE_REPS     runs per measurement, the fastest is shown (default 1)
#   TRACE_CPU      the core to pin to (default 0)
#   TRACE_KEEP     1: keep the generated files (and reuse them next time)
#   TRACE_PYTHON   0: skip the Python reference (it needs ~10x the file in RAM)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bin=${1:-build/bench/bench_trace}
if [ "$bin" = build/bench/bench_trace ] && [ ! -x "$bin" ]; then
    bin="$here/../build/bench/bench_trace"
fi
if [ ! -x "$bin" ]; then
    echo "trace.sh: $bin not found; build first (ninja -C build)" >&2
    exit 1
fi
mb=${TRACE_MB:-1100}
file=${TRACE_FILE:-/tmp/opm_big_trace.json}
reps=${TRACE_REPS:-1}
cpu=${TRACE_CPU:-0}
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c "$cpu"); fi
if [ ! -x /usr/bin/time ]; then
    echo "trace.sh: /usr/bin/time not found (Debian package 'time')" >&2
    exit 1
fi

cleanup() { [ "${TRACE_KEEP:-0}" = 1 ] || rm -f "$file" "$file.gz"; }
trap cleanup EXIT

if [ "${TRACE_KEEP:-0}" = 1 ] && [ -s "$file" ] && { [ "${TRACE_GZIP:-0}" != 1 ] || [ -s "$file.gz" ]; }; then
    echo "reusing $file"
else
    args=(--size-mb "$mb" --out "$file")
    [ "${TRACE_COMPACT:-0}" = 1 ] && args+=(--compact)
    [ "${TRACE_GZIP:-0}" = 1 ] && args+=(--gzip)
    python3 "$here/make_big_trace.py" "${args[@]}"
fi
echo "pinned to cpu $cpu: ${pin[*]:-(taskset missing, not pinned)}"

run_bench() {  # mode, file
    "${pin[@]}" "$bin" --mode "$1" --reps "$reps" "$2" || echo "$1: failed (see above)"
}
run_bench read "$file"
run_bench report "$file"
if [ "${TRACE_GZIP:-0}" = 1 ]; then
    echo "gzip input ($file.gz, $(stat -c %s "$file.gz") bytes; MB/s of uncompressed JSON):"
    run_bench read "$file.gz"
    run_bench report "$file.gz"
fi

if [ "${TRACE_PYTHON:-1}" != 0 ]; then
    log=$(mktemp)
    "${pin[@]}" /usr/bin/time -v python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$file" 2>"$log"
    bytes=$(stat -c %s "$file")
    awk -v bytes="$bytes" '
        /Elapsed \(wall clock\) time/ {
            n = split($NF, p, ":"); s = 0
            for (i = 1; i <= n; i++) s = s * 60 + p[i]
        }
        /Maximum resident set size/ { rss = $NF }
        END {
            mb = bytes / 1e6
            printf "python  %10.1f MB  wall %7.3f s  %7.1f MB/s  max_rss %8d KiB  (%.1f%% of the JSON)  json.load, process start included\n",
                   mb, s, mb / s, rss, 100 * rss * 1024 / bytes
        }' "$log"
    rm -f "$log"
fi
