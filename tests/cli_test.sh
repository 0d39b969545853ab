#!/usr/bin/env bash
# cli_test.sh — end-to-end checks of the `opmodel` program: exit statuses, the
# one-line error convention, JSON output, --batch, hardware round trip,
# expand, --clock-mhz and `ops`.  Run by `meson test cli`, which sets
# OPMODEL_BIN (the built program) and OPM_SOURCE_DIR (the source tree).
# Prints "ok - ..." / "not ok - ..." per check, then "cli: N passed, M failed".
set -u

: "${OPMODEL_BIN:?set OPMODEL_BIN to the opmodel executable}"
: "${OPM_SOURCE_DIR:?set OPM_SOURCE_DIR to the source tree}"
BIN=$OPMODEL_BIN
cd "$OPM_SOURCE_DIR" || exit 2

T=$(mktemp -d "${TMPDIR:-/tmp}/opmodel_cli.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

passed=0
failed=0

# report STATUS DESCRIPTION [DETAIL]: STATUS 0 is a pass.
report() {
    if [ "$1" -eq 0 ]; then
        echo "ok - $2"
        passed=$((passed + 1))
    else
        echo "not ok - $2${3:+ -- $3}"
        failed=$((failed + 1))
    fi
}

# run CMD...: runs it, leaving $T/out, $T/err and RC.
run() {
    "$@" >"$T/out" 2>"$T/err"
    RC=$?
}

# lines FILE: number of lines (a last line without newline counts).
lines() { awk 'END { print NR }' "$1"; }

# first_err: first line of stderr, for messages.
first_err() { head -n 1 "$T/err"; }

# latency FILE: the latency_s of the first JSON line of FILE.
latency() { sed -n 's/.*"latency_s": *\([-+0-9.eE]*\).*/\1/p' "$1" | head -n 1; }

# one_json_line DESC: stdout is exactly one JSON object with latency_s, exit 0.
one_json_line() {
    local why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && [ "$(lines "$T/out")" -ne 1 ] && why="expected 1 line on stdout, got $(lines "$T/out")"
    [ -z "$why" ] && ! grep -q '^{.*}$' "$T/out" && why="stdout is not one JSON object"
    [ -z "$why" ] && ! grep -q '"latency_s"' "$T/out" && why="no latency_s in the output"
    [ -z "$why" ]
    report $? "$1" "$why"
}

# ---- version and help -------------------------------------------------------

run "$BIN" --version
why=""
[ "$RC" -eq 0 ] || why="exit $RC"
[ -z "$why" ] && ! grep -q '^opmodel [0-9]' "$T/out" && why="stdout: $(head -n 1 "$T/out")"
[ -z "$why" ]
report $? "--version exits 0 and prints the version" "$why"

run "$BIN" --help
[ "$RC" -eq 0 ] && [ -s "$T/out" ]
report $? "--help exits 0 and prints usage on stdout" "exit $RC"

for cmd in predict expand ops models hardware; do
    run "$BIN" "$cmd" --help
    [ "$RC" -eq 0 ] && [ -s "$T/out" ]
    report $? "$cmd --help exits 0 and prints usage on stdout" "exit $RC"
done

run "$BIN" frobnicate
why=""
[ "$RC" -eq 2 ] || why="exit $RC"
[ -z "$why" ] && [ -s "$T/out" ] && why="stdout not empty"
[ -z "$why" ] && ! head -n 1 "$T/err" | grep -q '^opmodel: ' && why="stderr: $(first_err)"
[ -z "$why" ]
report $? "unknown command exits 2 with an 'opmodel: ' message" "$why"

# ---- predict ----------------------------------------------------------------

run "$BIN" predict --hardware h100_sxm --op examples/gemm.yaml
one_json_line "predict examples/gemm.yaml on h100_sxm prints one JSON line"
cp "$T/out" "$T/gemm_h100.json"

run "$BIN" predict --hardware configs/hardware/gpu_generic.yaml --op examples/gemm.yaml
one_json_line "predict --hardware configs/hardware/gpu_generic.yaml --op examples/gemm.yaml"

for bad in op_unknown_kind.yaml op_gemm_inner_mismatch.yaml op_yaml_syntax.yaml op_empty.yaml \
           op_json_syntax.json; do
    f=tests/data/bad/$bad
    run "$BIN" predict --hardware h100_sxm --op "$f"
    why=""
    [ "$RC" -eq 2 ] || why="exit $RC"
    [ -z "$why" ] && [ -s "$T/out" ] && why="stdout not empty: $(head -c 200 "$T/out")"
    [ -z "$why" ] && [ "$(lines "$T/err")" -ne 1 ] && why="expected 1 line on stderr, got $(lines "$T/err")"
    [ -z "$why" ] && ! grep -q "^opmodel: $f:[0-9][0-9]*:[0-9][0-9]*: " "$T/err" &&
        why="stderr: $(first_err)"
    [ -z "$why" ]
    report $? "predict on $bad exits 2 with one 'opmodel: $f:LINE:COL: ' line" "$why"
done

# ---- batch ------------------------------------------------------------------

cat >"$T/batch.jsonl" <<'EOF'
{"name": "up", "kind": "gemm", "m": 128, "n": 4096, "k": 4096, "dtype": "bf16"}

{"name": "norm", "kind": "rmsnorm", "shape": [128, 4096], "dtype": "bf16"}
{"name": "broken", "kind": "gemm", "m": -4, "n": 4096, "k": 4096, "dtype": "bf16"}
   
{"name": "sm", "kind": "softmax", "shape": [8, 128, 128], "dtype": "fp32"}
EOF
run "$BIN" predict --hardware h100_sxm --batch "$T/batch.jsonl"
nonblank=$(grep -c '[^[:space:]]' "$T/batch.jsonl")
why=""
[ "$RC" -eq 1 ] || why="exit $RC, expected 1: $(first_err)"
[ -z "$why" ] && [ "$(lines "$T/out")" -ne "$nonblank" ] &&
    why="expected $nonblank output lines, got $(lines "$T/out")"
[ -z "$why" ] && ! sed -n 3p "$T/out" | grep -q '^{"line": 4, "error": ".*"}$' &&
    why="third output line: $(sed -n 3p "$T/out")"
[ -z "$why" ] && [ "$(grep -c '"latency_s"' "$T/out")" -ne $((nonblank - 1)) ] &&
    why="expected $((nonblank - 1)) predictions"
[ -z "$why" ] && ! sed -n 1p "$T/out" | grep -q '"name": "up"' && why="first line is not op 'up'"
[ -z "$why" ] && ! sed -n 4p "$T/out" | grep -q '"name": "sm"' && why="last line is not op 'sm'"
[ -z "$why" ]
report $? "--batch with a bad line 4: exit 1, one output line per op, {\"line\": 4, \"error\": ...}" "$why"

# ---- hardware round trip ----------------------------------------------------

run "$BIN" hardware show h100_sxm --format yaml
cp "$T/out" "$T/h100.yaml"
why=""
[ "$RC" -eq 0 ] || why="hardware show: exit $RC: $(first_err)"
if [ -z "$why" ]; then
    run "$BIN" predict --hardware "$T/h100.yaml" --op examples/gemm.yaml
    [ "$RC" -eq 0 ] || why="predict with the shown YAML: exit $RC: $(first_err)"
    [ -z "$why" ] && [ "$(latency "$T/out")" != "$(latency "$T/gemm_h100.json")" ] &&
        why="latency $(latency "$T/out") != built-in $(latency "$T/gemm_h100.json")"
fi
[ -z "$why" ]
report $? "hardware show h100_sxm --format yaml loads back through predict --hardware FILE" "$why"

# ---- expand -----------------------------------------------------------------

run "$BIN" expand examples/gemm_short.yaml
cp "$T/out" "$T/full.yaml"
why=""
[ "$RC" -eq 0 ] || why="expand: exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '^tensors:' "$T/full.yaml" && why="no tensors: in the expansion"
[ -z "$why" ] && grep -Eq '^(m|n|k|dtype):' "$T/full.yaml" && why="short-form keys left in the expansion"
if [ -z "$why" ]; then
    run "$BIN" predict --hardware h100_sxm --op "$T/full.yaml"
    [ "$RC" -eq 0 ] || why="predict --op on the expansion: exit $RC: $(first_err)"
    cp "$T/out" "$T/full.json"
fi
if [ -z "$why" ]; then
    run "$BIN" predict --hardware h100_sxm --op examples/gemm_short.yaml
    [ "$RC" -eq 0 ] || why="predict on the short form: exit $RC: $(first_err)"
    [ -z "$why" ] && ! cmp -s "$T/out" "$T/full.json" && why="short and expanded forms predict differently"
fi
[ -z "$why" ]
report $? "expand examples/gemm_short.yaml prints a full form that predict --op accepts" "$why"

# ---- --clock-mhz --------------------------------------------------------------

cat >"$T/big_gemm.yaml" <<'EOF'
name: big
kind: gemm
m: 8192
n: 8192
k: 8192
dtype: bf16
EOF
why=""
run "$BIN" predict --hardware a100_40gb_pcie --op "$T/big_gemm.yaml"
[ "$RC" -eq 0 ] || why="at the base clock: exit $RC: $(first_err)"
base=$(latency "$T/out")
grep -q '"bound": "compute"' "$T/out" || [ -n "$why" ] || why="not compute-bound at the base clock"
if [ -z "$why" ]; then
    run "$BIN" predict --hardware a100_40gb_pcie --clock-mhz 900 --op "$T/big_gemm.yaml"
    [ "$RC" -eq 0 ] || why="at 900 MHz: exit $RC: $(first_err)"
    slow=$(latency "$T/out")
    grep -q '"bound": "compute"' "$T/out" || [ -n "$why" ] || why="not compute-bound at 900 MHz"
fi
if [ -z "$why" ]; then
    why=$(awk -v a="$base" -v b="$slow" 'BEGIN {
        if (a + 0 <= 0 || b + 0 <= 0) { printf "latencies %s and %s", a, b; exit }
        want = 1410 / 900; got = b / a; rel = (got - want) / want; if (rel < 0) rel = -rel
        if (rel > 1e-6) printf "ratio %.9g, expected %.9g (relative error %.3g)", got, want, rel }')
fi
[ -z "$why" ]
report $? "--clock-mhz 900 slows a compute-bound GEMM on a100_40gb_pcie by 1410/900" "$why"

# ---- ops --------------------------------------------------------------------

run "$BIN" ops
why=""
[ "$RC" -eq 0 ] || why="exit $RC"
missing=""
for k in gemm batched_gemm attention_prefill attention_decode softmax layernorm rmsnorm elementwise \
         reduction embedding copy; do
    grep -q "^$k " "$T/out" || missing="$missing $k"
done
[ -z "$why" ] && [ -n "$missing" ] && why="missing:$missing"
[ -z "$why" ]
report $? "ops lists all 11 kinds" "$why"

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
