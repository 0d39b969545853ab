#!/usr/bin/env bash
# bench/batch.sh — throughput and peak memory of `opmodel predict --batch`.
#
# Generates deterministic JSONL files (a fixed mix of gemm, attention_prefill,
# rmsnorm and elementwise short-form ops, like examples/ops.jsonl) of
# 1,000,000, 100,000 and 10,000 lines in a temporary directory, runs
#
#     opmodel predict --hardware h100_sxm --batch FILE > /dev/null
#
# under /usr/bin/time -v for each, and prints lines, wall seconds, lines/s and
# peak RSS (KiB).  Peak RSS should not grow with the number of lines.
# A benchmark, not a test: it reports figures and does not judge them.
#
# usage: bench/batch.sh [OPMODEL_BIN] [--json]
#   OPMODEL_BIN  the CLI to measure (default build/src/cli/opmodel)
#   --json       also print one JSON object with the results
# environment:
#   BATCH_SIZES  line counts to run, largest first (default "1000000 100000 10000")
#   BATCH_REPS   runs per size; the fastest is reported (default 3)
#   HARDWARE     hardware name (default h100_sxm)
#   BATCH_MIX    mix (default) or gemm: every line a short GEMM,
#                {"name": "proj_I", "kind": "gemm", "m": M, "n": N, "k": K, "dtype": D}
#   BATCH_PYTHON 1: also time /usr/bin/python3's bare loop of json.loads over
#                each line of the same file, and print the ratio
set -euo pipefail

bin=build/src/cli/opmodel
json=0
for a in "$@"; do
    case "$a" in
    --json) json=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) bin=$a ;;
    esac
done
sizes=${BATCH_SIZES:-"1000000 100000 10000"}
reps=${BATCH_REPS:-3}
hardware=${HARDWARE:-h100_sxm}
mix=${BATCH_MIX:-mix}
python=${BATCH_PYTHON:-0}

# The default is relative to the current directory, else to the source tree.
if [ "$bin" = build/src/cli/opmodel ] && [ ! -x "$bin" ]; then
    bin="$(cd "$(dirname "$0")/.." && pwd)/build/src/cli/opmodel"
fi
if [ ! -x "$bin" ]; then
    echo "batch.sh: $bin: no such executable (build first: ninja -C build)" >&2
    exit 2
fi
if [ ! -x /usr/bin/time ]; then
    echo "batch.sh: /usr/bin/time missing; installing the Debian package 'time'" >&2
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
    else
        sudo apt-get install -y time >/dev/null
    fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/opmodel-batch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# gen N FILE — a deterministic mix: line i (0-based) is, by i % 4, a gemm, an
# attention_prefill, an rmsnorm or an elementwise op, with sizes cycling
# through small tables at different strides so neighbouring lines differ.
gen() {
    awk -v n="$1" -v gemm_only="$([ "$mix" = gemm ] && echo 1 || echo 0)" 'BEGIN {
        split("1 16 128 512 2048 4096 8192", M, " ");          nm = 7
        split("4096 8192 14336 28672 1024", N, " ");          nn = 5
        split("4096 8192 14336 1024", K, " ");                nk = 4
        split("bf16 fp16 fp8_e4m3 fp32", D, " ");             nd = 4
        split("512 1024 2048 4096 8192", S, " ");             ns = 5
        split("32 64 8", H, " ");                              nh = 3
        split("add mul silu_mul gelu exp", OP, " ");           nop = 5
        for (i = 0; i < n; i++) {
            r = gemm_only ? 0 : i % 4; j = gemm_only ? i : int(i / 4)
            if (r == 0) {
                printf "{\"name\": \"proj_%d\", \"kind\": \"gemm\", \"m\": %d, \"n\": %d, \"k\": %d, \"dtype\": \"%s\"}\n",
                    i, M[j % nm + 1], N[j % nn + 1], K[j % nk + 1], D[j % nd + 1]
            } else if (r == 1) {
                s = S[j % ns + 1]; h = H[j % nh + 1]
                printf "{\"name\": \"attn_%d\", \"kind\": \"attention_prefill\", \"batch\": %d, \"seq_q\": %d, \"seq_kv\": %d, \"heads\": %d, \"kv_heads\": 8, \"head_dim\": 128, \"causal\": %s, \"dtype\": \"bf16\"}\n",
                    i, j % 4 + 1, s, s, h, (j % 2 ? "false" : "true")
            } else if (r == 2) {
                printf "{\"name\": \"norm_%d\", \"kind\": \"rmsnorm\", \"shape\": [%d, %d], \"dtype\": \"%s\"}\n",
                    i, M[j % nm + 1], K[j % nk + 1], (j % 2 ? "fp32" : "bf16")
            } else {
                m = M[j % nm + 1]; c = N[j % nn + 1]
                printf "{\"name\": \"ew_%d\", \"kind\": \"elementwise\", \"inputs\": [[%d, %d], [%d, %d]], \"dtype\": \"bf16\", \"op\": \"%s\"}\n",
                    i, m, c, m, c, OP[j % nop + 1]
            }
        }
    }' > "$2"
}

now_ns() { date +%s%N; }

# Sanity check (not timed): every generated line must predict without error.
gen 1000 "$tmp/check.jsonl"
if ! "$bin" predict --hardware "$hardware" --batch "$tmp/check.jsonl" > "$tmp/check.out"; then
    echo "batch.sh: warning: some generated lines failed:" >&2
    grep -m 3 '"error"' "$tmp/check.out" >&2 || true
fi
if [ "$(wc -l < "$tmp/check.out")" -ne 1000 ]; then
    echo "batch.sh: warning: expected 1000 output lines, got $(wc -l < "$tmp/check.out")" >&2
fi

results=()
printf '%-10s %12s %10s %14s %14s\n' lines bytes wall_s lines_per_s max_rss_kib
for n in $sizes; do
    f="$tmp/ops_$n.jsonl"
    gen "$n" "$f"
    bytes=$(wc -c < "$f")
    best_ns=0
    best_rss=0
    for ((r = 0; r < reps; r++)); do
        t0=$(now_ns)
        rc=0
        /usr/bin/time -v -o "$tmp/time.txt" "$bin" predict --hardware "$hardware" --batch "$f" > /dev/null || rc=$?
        t1=$(now_ns)
        if [ "$rc" -ne 0 ]; then
            echo "batch.sh: warning: exit status $rc for $n lines" >&2
        fi
        rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt")
        ns=$((t1 - t0))
        if [ "$best_ns" -eq 0 ] || [ "$ns" -lt "$best_ns" ]; then best_ns=$ns; fi
        if [ "$rss" -gt "$best_rss" ]; then best_rss=$rss; fi
    done
    wall=$(awk -v ns="$best_ns" 'BEGIN { printf "%.3f", ns / 1e9 }')
    lps=$(awk -v n="$n" -v ns="$best_ns" 'BEGIN { printf "%.0f", n / (ns / 1e9) }')
    printf '%-10s %12s %10s %14s %14s\n' "$n" "$bytes" "$wall" "$lps" "$best_rss"
    pyjson=""
    if [ "$python" = 1 ]; then
        # Alternate with nothing else: the python runs follow the CLI's on the same file.
        py_ns=0
        for ((r = 0; r < reps; r++)); do
            t0=$(now_ns)
            /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1], "rb"):
    json.loads(line)' "$f"
            t1=$(now_ns)
            ns=$((t1 - t0))
            if [ "$py_ns" -eq 0 ] || [ "$ns" -lt "$py_ns" ]; then py_ns=$ns; fi
        done
        pywall=$(awk -v ns="$py_ns" 'BEGIN { printf "%.3f", ns / 1e9 }')
        pylps=$(awk -v n="$n" -v ns="$py_ns" 'BEGIN { printf "%.0f", n / (ns / 1e9) }')
        ratio=$(awk -v a="$py_ns" -v b="$best_ns" 'BEGIN { printf "%.2f", a / b }')
        printf '%-10s %12s %10s %14s %14s  python json.loads loop; opmodel/python = %sx\n' "$n" "$bytes" "$pywall" "$pylps" "-" "$ratio"
        pyjson=", \"python_wall_s\": $pywall, \"python_lines_per_s\": $pylps, \"speedup_vs_python\": $ratio"
    fi
    results+=("{\"lines\": $n, \"bytes\": $bytes, \"wall_s\": $wall, \"lines_per_s\": $lps, \"max_rss_kib\": $best_rss$pyjson}")
done
echo "(wall_s: fastest of $reps runs, process start included; max_rss_kib: the largest of those runs)"

if [ "$json" = 1 ]; then
    joined=$(IFS=,; echo "${results[*]}")
    printf '{"benchmark": "batch", "hardware": "%s", "mix": "%s", "runs": [%s]}\n' "$hardware" "$mix" "${joined//\},\{/\}, \{}"
fi
