#!/usr/bin/env bash
# bench/validate.sh — throughput and peak memory of `opmodel validate` on a
# generated contract §4 general measurement JSONL.
#
# Generates a deterministic file of VALIDATE_LINES (default 100,000) lines
# in a temporary directory: a repeating mix of gemm, attention_decode,
# attention_prefill, rmsnorm, copy and elementwise short-form ops (sizes
# cycling through small tables) on four built-in hardware, three sources,
# every fifth line at a lower clock_mhz and every third with a measured
# energy_j; the measured values are made up (the op's size times a
# constant), which does not change the work.  Then runs, under
# /usr/bin/time -v, VALIDATE_REPS times each (the fastest is reported):
#
#     opmodel validate --data FILE --format json > /dev/null
#     opmodel validate --data FILE --format json --calibrate-fixed-overhead --output-csv OUT > /dev/null
#
# and prints lines, wall seconds (process start included), lines/s and peak
# RSS (KiB).  A benchmark, not a test: it reports figures and does not judge
# them.
#
# usage: bench/validate.sh [OPMODEL_BIN]
# environment: VALIDATE_LINES, VALIDATE_REPS (default 3), VALIDATE_MODEL
#   (default extended_roofline), VALIDATE_KEEP=1 keeps the generated file
set -euo pipefail

bin=${1:-build/src/cli/opmodel}
n=${VALIDATE_LINES:-100000}
reps=${VALIDATE_REPS:-3}
model=${VALIDATE_MODEL:-extended_roofline}
if [ ! -x "$bin" ]; then
    echo "validate.sh: $bin: no such executable (build first: ninja -C build)" >&2
    exit 2
fi
time_bin=/usr/bin/time
[ -x "$time_bin" ] || time_bin=

tmp=$(mktemp -d "${TMPDIR:-/tmp}/opmodel-validate.XXXXXX")
[ "${VALIDATE_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
f="$tmp/measured_$n.jsonl"

awk -v n="$n" 'BEGIN {
    split("1 16 128 512 2048 4096 8192", M, " ");      nm = 7
    split("4096 8192 14336 28672 1024", N, " ");      nn = 5
    split("4096 8192 14336 1024", K, " ");            nk = 4
    split("a100_40gb_pcie h100_sxm mi300x t4", HW, " "); nhw = 4
    split("1215 1410 1980 2100 1590", CLK, " ")
    split("bench_a/x bench_b/y bench_c/z", SRC, " ");  nsrc = 3
    split("add mul silu_mul gelu exp", OP, " ");       nop = 5
    for (i = 0; i < n; i++) {
        r = i % 6; j = int(i / 6); hw = (i % nhw) + 1
        if (r == 0) {
            m = M[j % nm + 1]; c = N[j % nn + 1]; k = K[j % nk + 1]
            op = sprintf("{\"kind\": \"gemm\", \"m\": %d, \"n\": %d, \"k\": %d, \"dtype\": \"bf16\"}", m, c, k)
            lat = 2e-14 * m * c * k + 5e-6
        } else if (r == 1) {
            b = j % 32 + 1; s = 512 * (j % 8 + 1)
            op = sprintf("{\"kind\": \"attention_decode\", \"batch\": %d, \"seq_q\": 1, \"seq_kv\": %d, \"heads\": 32, \"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\"}", b, s)
            lat = 1e-10 * b * s + 4e-6
        } else if (r == 2) {
            s = 256 * (j % 8 + 1)
            op = sprintf("{\"kind\": \"attention_prefill\", \"batch\": %d, \"seq_q\": %d, \"seq_kv\": %d, \"heads\": 32, \"kv_heads\": 8, \"head_dim\": 128, \"causal\": true, \"dtype\": \"bf16\"}", j % 4 + 1, s, s)
            lat = 1e-12 * s * s * (j % 4 + 1) + 8e-6
        } else if (r == 3) {
            m = M[j % nm + 1]; k = K[j % nk + 1]
            op = sprintf("{\"kind\": \"rmsnorm\", \"shape\": [%d, %d], \"dtype\": \"bf16\"}", m, k)
            lat = 2e-12 * m * k + 3e-6
        } else if (r == 4) {
            m = M[j % nm + 1]; c = N[j % nn + 1]
            op = sprintf("{\"kind\": \"copy\", \"shape\": [%d, %d], \"dtype\": \"bf16\"}", m, c)
            lat = 1.5e-12 * m * c + 3e-6
        } else {
            m = M[j % nm + 1]; c = N[j % nn + 1]
            op = sprintf("{\"kind\": \"elementwise\", \"inputs\": [[%d, %d], [%d, %d]], \"dtype\": \"bf16\", \"op\": \"%s\"}", m, c, m, c, OP[j % nop + 1])
            lat = 2e-12 * m * c + 3e-6
        }
        clock = (i % 5 == 4 && hw <= 2) ? sprintf(", \"clock_mhz\": %d", CLK[hw] - 300) : ""
        energy = (i % 3 == 0) ? sprintf(", \"energy_j\": %.6g", lat * 300) : ""
        printf "{\"hardware\": \"%s\"%s, \"op\": %s, \"measured\": {\"latency_s\": %.6g%s}, \"source\": \"%s\", \"timing\": \"events\"}\n", \
            HW[hw], clock, op, lat, energy, SRC[i % nsrc + 1]
    }
}' > "$f"
bytes=$(wc -c < "$f")

# Sanity check (not timed): the file is all good lines.
"$bin" validate --data "$f" --format json --model "$model" > "$tmp/check.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("validate.sh: %d lines scored, %d failed, %d of unknown hardware" % (d["rows"], d["rows_failed"], d["rows_unknown_hw"]))
if d["first_bad"]: print("validate.sh: warning: first bad line: " + d["first_bad"])' "$tmp/check.json" >&2 || true

printf '%-44s %8s %10s %10s %12s %12s\n' case lines bytes wall_s lines_per_s max_rss_kib
run_case() {
    local label=$1
    shift
    local best_ns=0 best_rss=0
    for ((r = 0; r < reps; r++)); do
        local t0 t1 rss=0
        t0=$(date +%s%N)
        if [ -n "$time_bin" ]; then
            "$time_bin" -v -o "$tmp/time.txt" "$bin" validate --data "$f" --model "$model" --format json "$@" > /dev/null
            rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt")
        else
            "$bin" validate --data "$f" --model "$model" --format json "$@" > /dev/null
        fi
        t1=$(date +%s%N)
        local ns=$((t1 - t0))
        if [ "$best_ns" -eq 0 ] || [ "$ns" -lt "$best_ns" ]; then best_ns=$ns; fi
        if [ "$rss" -gt "$best_rss" ]; then best_rss=$rss; fi
    done
    printf '%-44s %8s %10s %10s %12s %12s\n' "$label" "$n" "$bytes" \
        "$(awk -v ns="$best_ns" 'BEGIN { printf "%.3f", ns / 1e9 }')" \
        "$(awk -v n="$n" -v ns="$best_ns" 'BEGIN { printf "%.0f", n / (ns / 1e9) }')" "$best_rss"
}
run_case "$model"
run_case "$model, calibrated + --output-csv" --calibrate-fixed-overhead --output-csv "$tmp/rows.csv"
echo "(wall_s: fastest of $reps runs, process start included; max_rss_kib: the largest of those runs)"
[ "${VALIDATE_KEEP:-0}" = 1 ] && echo "kept: $f"
exit 0
