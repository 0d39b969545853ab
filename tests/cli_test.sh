#!/usr/bin/env bash
# cli_test.sh — end-to-end checks of the `opmodel` program: exit statuses, the
# one-line error convention, JSON output, --batch, hardware round trip,
# expand, --clock-mhz, `ops`, validate-gemm-latency and validate.  Run by
# `meson test cli`, which sets OPMODEL_BIN (the built program) and
# OPM_SOURCE_DIR (the source tree).
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

# fell_back: a GEMM on a TPU has no tile model; the roofline answers and the output says so.
run "$BIN" predict --hardware tpu_v5e --op examples/gemm.yaml --model extended_roofline
one_json_line "predict a GEMM on tpu_v5e with extended_roofline"
grep -q '"fell_back": true' "$T/out" && grep -q '"model": "extended_roofline"' "$T/out"
report $? "predict says fell_back when the roofline answered for extended_roofline"
grep -q '"fell_back": false' "$T/gemm_h100.json" && grep -q '"diagnostics_dropped": 0' "$T/gemm_h100.json"
report $? "predict prints fell_back false and diagnostics_dropped 0 for the roofline"
run "$BIN" predict --hardware tpu_v5e --op examples/gemm.yaml --model effective_roofline --format table
grep -q 'fell back to the roofline' "$T/out"
report $? "predict --format table says when the model fell back to the roofline"

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

# ---- trace report -------------------------------------------------------------

TRACE=tests/data/traces/torch_compile/trace.json.gz

# fails_cleanly DESC [NEEDLE]: exit 2, nothing on stdout, one 'opmodel: ' line on
# stderr (containing NEEDLE when given).
fails_cleanly() {
    local why=""
    [ "$RC" -eq 2 ] || why="exit $RC"
    [ -z "$why" ] && [ -s "$T/out" ] && why="stdout not empty: $(head -c 200 "$T/out")"
    [ -z "$why" ] && [ "$(lines "$T/err")" -ne 1 ] && why="expected 1 line on stderr, got $(lines "$T/err")"
    [ -z "$why" ] && ! grep -q '^opmodel: ' "$T/err" && why="stderr: $(first_err)"
    [ -z "$why" ] && [ -n "${2:-}" ] && ! grep -q "$2" "$T/err" && why="no '$2' in: $(first_err)"
    [ -z "$why" ]
    report $? "$1" "$why"
}

# top_rows FILE: data rows of the table's "Top N of M groups" section.
top_rows() { awk '/^Top [0-9]+ of [0-9]+ groups/ { on = 1; next } on && /^$/ { exit } on { n++ } END { print n - 1 }' "$1"; }

run "$BIN" trace --help
[ "$RC" -eq 0 ] && [ -s "$T/out" ]
report $? "trace --help exits 0 and prints usage on stdout" "exit $RC"

run "$BIN" trace report --help
[ "$RC" -eq 0 ] && grep -q -- '--output-dir' "$T/out"
report $? "trace report --help exits 0 and lists the options" "exit $RC"

run "$BIN" trace
fails_cleanly "trace without a subcommand exits 2 with one line"

run "$BIN" trace frobnicate "$TRACE"
fails_cleanly "trace with an unknown subcommand exits 2 with one line" "frobnicate"

run "$BIN" trace report "$TRACE" --hardware mi300x
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
for want in '^trace     ' '^hardware  mi300x' '^GPU       busy' 'GPU timeline' '  category ' \
            '^Top [0-9]* of [0-9]* groups by kernel time' '^Largest gap to roofline'; do
    [ -z "$why" ] && ! grep -q "$want" "$T/out" && why="no '$want' in the table"
done
[ -z "$why" ] && [ -s "$T/err" ] && why="stderr not empty with --hardware: $(first_err)"
[ -z "$why" ] && [ "$(top_rows "$T/out")" -lt 1 ] && why="no group rows"
[ -z "$why" ]
report $? "trace report --hardware mi300x prints the table" "$why"
cp "$T/out" "$T/trace_table.txt"

run "$BIN" trace report "$TRACE"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && [ "$(cat "$T/err")" != 'opmodel: hardware auto-detected: mi300x (from "AMD Instinct MI300X")' ] &&
    why="stderr: $(first_err)"
[ -z "$why" ] && ! grep -q '^hardware  mi300x' "$T/out" && why="table does not name mi300x"
[ -z "$why" ] && ! cmp -s "$T/out" "$T/trace_table.txt" && why="differs from the --hardware mi300x table"
[ -z "$why" ]
report $? "trace report detects mi300x from the trace's deviceProperties" "$why"

run "$BIN" trace report "$TRACE" --hardware mi300x --top 3
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && [ "$(top_rows "$T/out")" -ne 3 ] && why="expected 3 group rows, got $(top_rows "$T/out")"
[ -z "$why" ] && ! grep -q '^Top 3 of ' "$T/out" && why="no 'Top 3 of' title"
[ -z "$why" ]
report $? "trace report --top 3 shows 3 groups" "$why"

# The JSON: parses, keys in the contract's (§6) order, integers where counts.
run "$BIN" trace report "$TRACE" --hardware mi300x --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
cp "$T/out" "$T/trace.json"
if [ -z "$why" ]; then
    why=$(python3 - "$T/trace.json" <<'EOF' 2>&1
import json, sys
def in_order(keys, contract):
    present = [k for k in keys if k in contract]
    want = [k for k in contract if k in keys]
    return present == want and keys[:len(want)] == want
doc = json.load(open(sys.argv[1]), object_pairs_hook=lambda p: p)
top = [k for k, _ in doc]
d = dict(doc)
contract = ["trace", "hardware", "gpu_busy_s", "wall_s", "groups", "categories", "timeline"]
if top[:7] != contract: sys.exit("top-level keys %s" % top)
if d["hardware"] != "mi300x": sys.exit("hardware %r" % d["hardware"])
groups = d["groups"]
if not groups: sys.exit("no groups")
gkeys = ["name", "kind", "category", "params", "count", "kernel_time_s", "kernel_time_mean_s", "flops",
         "bytes", "tflops_per_s", "tb_per_s", "roofline_time_s", "pct_roofline", "bound", "kernels"]
for g in groups:
    keys = [k for k, _ in g]
    gd = dict(g)
    if not in_order(keys, gkeys): sys.exit("group keys %s" % keys)
    for k in ["name", "kind", "category", "params", "count", "kernel_time_s", "kernel_time_mean_s", "kernels"]:
        if k not in gd: sys.exit("group %s lacks %s" % (gd.get("name"), k))
    if not isinstance(gd["count"], int) or gd["count"] < 1: sys.exit("count %r" % gd["count"])
    if gd["kind"] is None and ("flops" in gd or "bytes" in gd): sys.exit("kind null with flops")
    if gd["kind"] is not None and not (isinstance(gd["flops"], int) and isinstance(gd["bytes"], int)):
        sys.exit("flops/bytes of %s not integers" % gd["name"])
    if not isinstance(gd["params"], list): sys.exit("params not an object")
times = [dict(g)["kernel_time_s"] for g in groups]
if times != sorted(times, reverse=True): sys.exit("groups not by kernel time")
ckeys = ["category", "kernel_time_s", "share"]
cats = d["categories"]
for c in cats:
    if [k for k, _ in c][:3] != ckeys: sys.exit("category keys %s" % [k for k, _ in c])
share = sum(dict(c)["share"] for c in cats)
if abs(share - 1) > 1e-6: sys.exit("shares sum to %r" % share)
tkeys = ["busy_s", "idle_s", "compute_s", "comm_s", "memcpy_s"]
if [k for k, _ in d["timeline"]][:5] != tkeys: sys.exit("timeline keys %s" % [k for k, _ in d["timeline"]])
if not any(dict(g).get("kind") is not None for g in groups): sys.exit("no group with a model")
EOF
)
fi
[ -z "$why" ]
report $? "trace report --format json parses, keys in contract §6 order" "$why"

run "$BIN" trace report "$TRACE" --hardware mi300x --format csv
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
header='name,kind,phase,category,count,kernel_time_s,kernel_time_mean_s,flops,bytes,flops_per_byte,tflops_per_s,tb_per_s,roofline_time_s,pct_roofline,bound,forward,params,input_dims,input_types,input_strides,concrete_inputs,kernels'
[ -z "$why" ] && [ "$(head -n 1 "$T/out")" != "$header" ] && why="header: $(head -n 1 "$T/out")"
if [ -z "$why" ]; then
    why=$(python3 - "$T/out" "$T/trace.json" <<'EOF' 2>&1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
groups = json.load(open(sys.argv[2]))["groups"]
if len(rows) != len(groups): sys.exit("%d rows, %d groups in the JSON" % (len(rows), len(groups)))
for r, g in zip(rows, groups):
    if r["name"] != g["name"] or int(r["count"]) != g["count"]: sys.exit("row %s differs" % r["name"])
EOF
)
fi
[ -z "$why" ]
report $? "trace report --format csv: one row per JSON group" "$why"

run "$BIN" trace report "$TRACE" --hardware mi300x --format csv --instances
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! head -n 1 "$T/out" | grep -q '^group,name,cpu_start_s,' && why="header: $(head -n 1 "$T/out")"
[ -z "$why" ] && [ "$(lines "$T/out")" -lt 2 ] && why="no instance rows"
[ -z "$why" ]
report $? "trace report --format csv --instances: one row per instance" "$why"

run "$BIN" trace report "$TRACE" --hardware mi300x --output-dir "$T/report/sub"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
for f in report.json groups.csv instances.csv report.txt roofline.svg; do
    [ -z "$why" ] && [ ! -s "$T/report/sub/$f" ] && why="$f missing or empty"
    [ -z "$why" ] && ! grep -qx "$T/report/sub/$f" "$T/out" && why="$f not listed on stdout"
done
[ -z "$why" ] && [ "$(ls -A "$T/report/sub" | wc -l)" -ne 5 ] && why="extra files: $(ls -A "$T/report/sub")"
[ -z "$why" ] && ! cmp -s "$T/report/sub/report.json" "$T/trace.json" && why="report.json differs from --format json"
[ -z "$why" ] && ! cmp -s "$T/report/sub/report.txt" "$T/trace_table.txt" && why="report.txt differs from the table"
if [ -z "$why" ]; then
    why=$(python3 -c 'import xml.dom.minidom, sys
d = xml.dom.minidom.parse(sys.argv[1])
if d.documentElement.tagName != "svg": sys.exit("root is " + d.documentElement.tagName)
if not d.getElementsByTagName("circle"): sys.exit("no circles")' "$T/report/sub/roofline.svg" 2>&1)
fi
[ -z "$why" ]
report $? "trace report --output-dir writes the 5 files; the SVG is well-formed XML" "$why"

run "$BIN" trace report "$TRACE" --hardware mi300x --output-dir "$T/trace.json"
fails_cleanly "trace report --output-dir on a file exits 2 with one line" "not a folder"

# A folder where roofline.svg should go: no file is written, none is left
# behind under a temporary name.
mkdir -p "$T/blocked/roofline.svg"
run "$BIN" trace report "$TRACE" --hardware mi300x --output-dir "$T/blocked"
fails_cleanly "trace report --output-dir with roofline.svg blocked exits 2 with one line" "roofline.svg"
left=$(ls -A "$T/blocked")
[ "$left" = roofline.svg ]
report $? "trace report writes no file, temporary or final, when one cannot be written" "left: $left"

# No GPU named, no --hardware: a report without roofline columns and no SVG.
echo '{"traceEvents": []}' >"$T/no_gpu.json"
run "$BIN" trace report "$T/no_gpu.json" --output-dir "$T/no_gpu"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '^opmodel: the trace names no GPU' "$T/err" && why="stderr: $(first_err)"
[ -z "$why" ] && [ "$(ls "$T/no_gpu" | tr '\n' ' ')" != "groups.csv instances.csv report.json report.txt " ] &&
    why="files: $(ls "$T/no_gpu" | tr '\n' ' ')"
[ -z "$why" ] && ! grep -q '"hardware": null' "$T/no_gpu/report.json" && why="report.json has a hardware"
[ -z "$why" ]
report $? "trace report without a known GPU: no hardware, 4 files, no SVG" "$why"

gzip -dc "$TRACE" | head -c 20000 >"$T/truncated.json"
run "$BIN" trace report "$T/truncated.json" --output-dir "$T/never"
fails_cleanly "trace report on a truncated trace exits 2 with the byte offset" "byte"
[ ! -e "$T/never" ]
report $? "trace report on a truncated trace writes no files" "$T/never exists"

# Imperfect inputs: each either fails cleanly, naming the file and where
# reading stopped, or gives a report that parses.
bad_trace() {   # NAME NEEDLE: $T/bad/NAME must fail with NEEDLE in the one line
    run "$BIN" trace report "$T/bad/$1" --format json
    fails_cleanly "trace report on $1 exits 2 with one line" "$T/bad/$1: .*$2"
}
mkdir -p "$T/bad"
: >"$T/bad/empty.json"
: >"$T/bad/empty.json.gz"
echo '{}' >"$T/bad/object.json"
echo '{"traceEvents": 5}' >"$T/bad/events_number.json"
echo '{"traceEvents": []} garbage' >"$T/bad/trailing.json"
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "10", "dur": 5}]}' >"$T/bad/ts_string.json"
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -5}]}' >"$T/bad/dur_negative.json"
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 9223372036854775, "dur": 9223372036854775}]}' \
    >"$T/bad/end_overflow.json"
head -c "$(( $(wc -c <"$TRACE") / 2 ))" "$TRACE" >"$T/bad/cut.json.gz"
bad_trace empty.json "byte 0: parse error: premature EOF"
bad_trace empty.json.gz "byte 0: parse error: premature EOF"
bad_trace object.json "no traceEvents array"
bad_trace events_number.json "byte 17: traceEvents: expected an array"
bad_trace trailing.json "trailing garbage"
bad_trace ts_string.json "ts: expected a number, got a string"
bad_trace dur_negative.json "dur: negative duration"
bad_trace end_overflow.json "dur: event ends beyond the int64 nanosecond range"
bad_trace cut.json.gz "gzip: compressed stream ends before its end marker"

# Odd but readable: fields of the wrong type are ignored, deep nesting is
# skipped without recursion, a kernel without its launch is its own op.
echo '[]' >"$T/bad/array.json"
python3 -c 'print("{\"traceEvents\": " + "[" * 100000 + "]" * 100000 + ", \"x\": " + "{\"a\": " * 100000 + "1" + "}" * 100000 + "}")' \
    >"$T/bad/deep.json"
cat >"$T/bad/odd_fields.json" <<'EOF'
{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": {"a": 1}, "tid": [1], "ts": 1, "dur": 5,
  "args": {"Input Dims": "not a list", "Input type": 5, "Concrete Inputs": [[[[[]]]]]}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": [1, 2]},
 {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"correlation": 99}},
 {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"correlation": "x"}}
], "deviceProperties": [{"name": 5}, 7]}
EOF
for f in array.json deep.json odd_fields.json; do
    run "$BIN" trace report "$T/bad/$f" --format json
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/out" 2>/dev/null && why="not JSON"
    [ -z "$why" ] && ! grep -q '^opmodel: the trace names no GPU' "$T/err" && why="stderr: $(first_err)"
    [ -z "$why" ]
    report $? "trace report on $f gives a report" "$why"
done
[ "$(python3 -c 'import json, sys; print(sum(g["count"] for g in json.load(open(sys.argv[1]))["groups"]))' "$T/out")" = 2 ]
report $? "trace report on odd_fields.json: the two launchless kernels are reported" ""

run "$BIN" trace report "$T/no_such_trace.json"
fails_cleanly "trace report on a missing file exits 2 with one line" "no_such_trace"

run "$BIN" trace report "$TRACE" --format yaml
fails_cleanly "trace report --format yaml exits 2 with one line" "format"

run "$BIN" trace report "$TRACE" --top many
fails_cleanly "trace report --top many exits 2 with one line" "top"

# ---- validate-gemm-latency ----------------------------------------------------

run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --format json --host-overlap 0.3
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert abs(d["host_overlap_fraction"] - 0.3) < 1e-9 and "host_overlap_us" in d' "$T/out" 2>/dev/null &&
    why="no host_overlap_fraction 0.3 / host_overlap_us in the JSON"
[ -z "$why" ]
report $? "validate-gemm-latency --host-overlap 0.3 reports the overlap it used" "$why"

# The source column is free text and becomes part of the group names the JSON
# keys on: a stray byte (\377), and a valid "é" that the 63-byte source tag
# cuts in half, must still give valid UTF-8 JSON, the bytes mended to U+FFFD.
mkdir -p "$T/gemm_utf8"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,source"
    long=$(printf 'x%.0s' $(seq 62))
    for m in 1 2 4 8 16 4096; do
        printf 'a100_40gb_pcie,fp32,1,%s,64,64,0,0,0,%s,te\377st:a/x\n' "$m" "$((20 + m))"
        printf 'a100_40gb_pcie,fp32,1,%s,64,64,0,0,0,%s,%s\303\251/y\n' "$m" "$((20 + m))" "$long"
    done
} >"$T/gemm_utf8/bad_bytes.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_utf8" --format json --compare-rooflines \
    --leave-one-hardware-out --output-params "$T/gemm_utf8_params.json"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
for f in "$T/out" "$T/gemm_utf8_params.json"; do
    [ -z "$why" ] && ! python3 -c 'import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
d = json.loads(text)
assert "te\ufffdst:a" in text and "|" + "x" * 62 + "\"" in text' "$f" 2>/dev/null &&
        why="$(basename "$f"): not valid UTF-8 JSON with the bad bytes as U+FFFD and the cut character dropped"
done
[ -z "$why" ]
report $? "validate-gemm-latency --format json: invalid UTF-8 in a CSV's source gives valid JSON" "$why"

# The 63-byte source tag ends inside the "é": the table and the per-row CSV
# drop the partial character instead of printing half of it (in the CSV the
# group is followed by the models' kernel columns).
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_utf8" --output-csv "$T/gemm_utf8_rows.csv"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import sys
long = b"|" + b"x" * 62
table, rows = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert long + b"=" in table and long + b"\xc3" not in table
assert long + b"," in rows and long + b"\xc3" not in rows' "$T/out" "$T/gemm_utf8_rows.csv" 2>/dev/null &&
    why="half of the cut character in the table or the CSV"
[ -z "$why" ]
report $? "validate-gemm-latency: a source tag cut at 63 bytes ends on a whole UTF-8 character" "$why"

# --leave-one-hardware-out refits the fp8 quantisation kernels' constants:
# one fold on every hardware and one per hardware with such rows, each value
# inside its bounds, the held-out errors reported (JSON and text).
mkdir -p "$T/gemm_refit"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,activation_quant,timing,l2_warm"
    for hw in h100_sxm h200_sxm; do
        for m in 1 16 512 4096 16384; do
            echo "$hw,fp8_e4m3,1,$m,1024,32,0,1,0,$((6 + m / 1000)),dynquant+cutlass_fp8_scaled_mm,t:q/x,dynamic,graph,input"
        done
        echo "$hw,bf16,1,4096,4096,4096,0,1,0,200,F.linear,t:b/x,none,graph,input"
    done
} >"$T/gemm_refit/rows.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_refit" --leave-one-hardware-out --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = d["leave_one_hardware_out"][0]["constant_refit"]
held = [f["held_out"] for f in r["folds"]]
assert held == [None, "h100_sxm", "h200_sxm"], held
for f in r["folds"]:
    assert 2 <= f["same_address_atomic_cycles"] <= 64 and 0.25 <= f["back_to_back_kernel_fraction"] <= 1, f
    assert f["fit_rows"] == (10 if f["held_out"] is None else 5), f
assert r["pooled_held_out_rows"] == 10 and r["pooled_held_out_mape_refit"] >= 0, r' "$T/out" 2>/dev/null &&
    why="$(head -c 600 "$T/out")"
[ -z "$why" ]
report $? "validate-gemm-latency --leave-one-hardware-out --format json: constant_refit folds within their bounds" "$why"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_refit" --leave-one-hardware-out
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q "refit of the fitted constants" "$T/out" && why="no refit table"
[ -z "$why" ] && ! grep -q "pooled held out" "$T/out" && why="no pooled held-out line"
[ -z "$why" ]
report $? "validate-gemm-latency --leave-one-hardware-out: the refit table per fold" "$why"

# launch_column DIR HW RATIO DESC: validate-gemm-latency on $T/DIR/rows.csv,
# whose groups t:a and t:b are one row with and without a launch column's
# value and t:c has a bad value: exactly one bad row, and t:a predicted
# under RATIO times t:b.
launch_column() {
    run "$BIN" validate-gemm-latency --data-dir "$T/$1" --no-calibrate-fixed-overhead --format json \
        --output-csv "$T/$1_rows.csv"
    local why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && ! python3 -c 'import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["rows_skipped_bad"] == 1, d["rows_skipped_bad"]
rows = {r["group"]: float(r["extended_roofline_us"]) for r in csv.DictReader(open(sys.argv[2]))}
hw, ratio = sys.argv[3], float(sys.argv[4])
assert rows[hw + "|t:a"] < ratio * rows[hw + "|t:b"], rows' "$T/out" "$T/$1_rows.csv" "$2" "$3" 2>/dev/null &&
        why="$(head -c 300 "$T/out"; cat "$T/$1_rows.csv")"
    [ -z "$why" ]
    report $? "$4" "$why"
}

# threads_per_cta, the recorded launch block, sets the kernel's warps: the
# same one-CTA-per-SM row on volta_sgemm_128x32_nn is predicted faster with
# its 256 threads (8 warps issue) than with the name's 64; a value that is
# not a thread count makes the row a bad one.
mkdir -p "$T/gemm_threads"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,threads_per_cta"
    echo "v100_pcie_32gb,fp32,8,32,128,4096,0,0,0,100,volta_sgemm_128x32_nn,t:a/x,256"
    echo "v100_pcie_32gb,fp32,8,32,128,4096,0,0,0,100,volta_sgemm_128x32_nn,t:b/x,"
    echo "v100_pcie_32gb,fp32,8,32,128,4096,0,0,0,100,volta_sgemm_128x32_nn,t:c/x,lots"
} >"$T/gemm_threads/rows.csv"
launch_column gemm_threads v100_pcie_32gb 0.8 \
    "validate-gemm-latency: threads_per_cta sets a kernel's warps; a bad value is a bad row"

# split_k, the K slices of the recorded launch grid, is the row's split:
# the same few-tile, long-K row is predicted faster split 8 ways than
# whole; a value that is not a slice count makes the row a bad one.
mkdir -p "$T/gemm_split"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,threads_per_cta,split_k"
    echo "t4,fp32,1,64,64,65536,0,1,1,100,volta_sgemm_64x64_tn,t:a/x,64,8"
    echo "t4,fp32,1,64,64,65536,0,1,1,100,volta_sgemm_64x64_tn,t:b/x,64,1"
    echo "t4,fp32,1,64,64,65536,0,1,1,100,volta_sgemm_64x64_tn,t:c/x,64,0"
} >"$T/gemm_split/rows.csv"
launch_column gemm_split t4 0.5 "validate-gemm-latency: split_k sets a row's K slices; a bad value is a bad row"

# --output-csv says what each model chose per row: an L40S fp8 row of
# vLLM's cutlass scaled_mm names the tile of vLLM's sm89 dispatch for its M
# and N (128x128x64, 5 stages, above M 256 with N up to 4096), and with the
# kernel column ignored a catalog kernel instead; the roofline names none,
# and every tile-modelled row names its limiting resource.
mkdir -p "$T/gemm_labels"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,activation_quant,timing"
    echo "l40s,fp8_e4m3,1,4096,3584,32,0,1,0,100,dynquant+cutlass_fp8_scaled_mm,t:a/x,dynamic,graph"
    echo "l40s,bf16,1,4096,4096,4096,0,1,0,600,F.linear,t:b/x,none,graph"
} >"$T/gemm_labels/rows.csv"
for col in hints ignore; do
    flag=""
    [ "$col" = ignore ] && flag="--ignore-kernel-column"
    run "$BIN" validate-gemm-latency --data-dir "$T/gemm_labels" --no-calibrate-fixed-overhead --compare-rooflines \
        $flag --output-csv "$T/gemm_labels_$col.csv"
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && ! python3 -c 'import csv, sys
rows = {r["dtype"]: r for r in csv.DictReader(open(sys.argv[1]))}
fp8, bf16 = rows["fp8_e4m3"], rows["bf16"]
for r in (fp8, bf16):
    assert r["roofline_kernel"] == "" and r["roofline_limiting_resource"] == "", r
    for m in ("extended_roofline", "effective_roofline"):
        assert r[m + "_kernel"] and r[m + "_limiting_resource"].endswith("_limited"), r
assert bf16["extended_roofline_kernel"].startswith("tensorop_"), bf16
if sys.argv[2] == "hints":
    assert fp8["extended_roofline_kernel"] == "hinted_128x128x64_s5", fp8
else:
    assert fp8["extended_roofline_kernel"].startswith("tensorop_"), fp8' "$T/gemm_labels_$col.csv" "$col" 2>"$T/py_err" &&
        why="$(cat "$T/py_err" "$T/gemm_labels_$col.csv")"
    [ -z "$why" ]
    report $? "validate-gemm-latency --output-csv ($col): each model's kernel and limiting resource per row" "$why"
done

# A calibrated run predicts the rows a power cap may limit again with the
# calibrated overhead (the cap credits its idle time); their labels are
# those of that second prediction, the one the CSV prints: each held-out
# T4 row names the kernel and limit that `predict` gives on a T4 carrying
# the group's calibrated overhead (--output-params).  Here a 225 us
# overhead turns the 160^3 row fixed-overhead-limited and gives the 512^3
# row another kernel.
mkdir -p "$T/gemm_cap_labels"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,source"
    for s in 32 48 64 80 96 112 128 160; do echo "t4,fp32,1,$s,$s,$s,0,0,0,300,t:cap/x"; done
    echo "t4,fp32,1,512,512,512,0,0,0,400,t:cap/x"
    echo "t4,fp32,1,2048,2048,2048,0,0,0,9000,t:cap/x"
} >"$T/gemm_cap_labels/rows.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_cap_labels" --output-csv "$T/cap_labels.csv" \
    --output-params "$T/cap_labels.json"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
if [ -z "$why" ]; then
    cycles=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["models"]["extended_roofline"][0]["device_fixed_overhead_cycles"])' "$T/cap_labels.json")
    "$BIN" hardware show t4 | sed "s/device_fixed_overhead_cycles: .*/device_fixed_overhead_cycles: $cycles/" >"$T/t4_cal.yaml"
    python3 -c 'import csv, json, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["calibration"] == "0":
        print(json.dumps({"name": r["m"], "kind": "gemm", "m": int(r["m"]), "n": int(r["n"]), "k": int(r["k"]),
                          "dtype": "fp32"}))' "$T/cap_labels.csv" >"$T/cap_ops.jsonl"
    "$BIN" predict --hardware "$T/t4_cal.yaml" --model extended_roofline --batch "$T/cap_ops.jsonl" >"$T/cap_pred.jsonl" ||
        why="predict on the calibrated T4 failed"
fi
[ -z "$why" ] && ! python3 -c 'import csv, json, sys
pred = {}
for line in open(sys.argv[2]):
    d = json.loads(line)["diagnostics"]
    pred[json.loads(line)["name"]] = (d["kernel"], d["limiting_resource"])
held = [r for r in csv.DictReader(open(sys.argv[1])) if r["calibration"] == "0"]
assert len(held) == len(pred) >= 6, (len(held), len(pred))
for r in held:
    got = (r["extended_roofline_kernel"], r["extended_roofline_limiting_resource"])
    assert got == pred[r["m"]], (r["m"], got, pred[r["m"]])
assert pred["160"][1] == "fixed_overhead_limited", pred["160"]' "$T/cap_labels.csv" "$T/cap_pred.jsonl" 2>"$T/py_err" &&
    why="$(cat "$T/py_err")"
[ -z "$why" ]
report $? "validate-gemm-latency --output-csv: a power-capped row's labels are those of its calibrated prediction" "$why"

mkdir -p "$T/gemm_empty"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_empty"
fails_cleanly "validate-gemm-latency on an empty directory exits 2 with one line" "csv files under"

# A hardware column naming a description file by a long path: one hardware
# (and one group) however many rows name it, the path kept whole.
long_dir="$T/$(printf 'd%.0s' $(seq 80))"
mkdir -p "$long_dir" "$T/gemm_longhw"
cp configs/hardware/p4.yaml "$long_dir/p4.yaml"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,source"
    for m in 1 2 4 8 16 4096; do
        printf '%s,fp32,1,%s,64,64,0,0,0,%s,src/x\n' "$long_dir/p4.yaml" "$m" "$((30 + m))"
    done
} >"$T/gemm_longhw/rows.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_longhw" --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert list(d["by_hardware"]) == [sys.argv[2]] and list(d["fixed_overhead_us"]) == [sys.argv[2] + "|src"]' \
    "$T/out" "$long_dir/p4.yaml" 2>/dev/null && why="by_hardware / groups: $(head -c 300 "$T/out")"
[ -z "$why" ]
report $? "validate-gemm-latency: a hardware given by a long path is one hardware and one group" "$why"

# An output file that cannot be written: one error line and no report on
# stdout, in both formats and with either file.
for fmt in table json; do
    run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --format "$fmt" --output-csv "$T/no_such_dir/rows.csv"
    fails_cleanly "validate-gemm-latency --format $fmt, unwritable --output-csv: exit 2, one line, no report" "output-csv"
    run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --format "$fmt" --output-params "$T/no_such_dir/p.json"
    fails_cleanly "validate-gemm-latency --format $fmt, unwritable --output-params: exit 2, one line, no report" "output-params"
done

# Outputs are written all or none: a second output that fails leaves the
# first target as it was (an older file kept, a new one not created).
printf 'old\n' >"$T/kept.csv"
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv "$T/kept.csv" \
    --output-params "$T/no_such_dir/p.json"
fails_cleanly "validate-gemm-latency: a failing --output-params leaves --output-csv's file as it was" "output-params"
[ "$(cat "$T/kept.csv")" = old ]
report $? "validate-gemm-latency: the older --output-csv file is kept whole" "$(head -c 80 "$T/kept.csv")"
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv "$T/new.csv" \
    --output-params "$T/no_such_dir/p.json"
[ "$RC" -eq 2 ] && [ ! -e "$T/new.csv" ] && ! ls "$T"/new.csv.* >/dev/null 2>&1
report $? "validate-gemm-latency: a failing --output-params creates no --output-csv file, temporary or not" ""

# A target that is not a regular file is written in place and never
# removed, even when the write fails (a full device).
if [ -c /dev/full ]; then
    run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv /dev/full
    fails_cleanly "validate-gemm-latency --output-csv /dev/full: exit 2, one line" "output-csv"
    [ -c /dev/full ]
    report $? "validate-gemm-latency: a failed write to /dev/full leaves the device in place" ""
fi

# A link as the output: the link's target gets the text, the link stays.
printf 'old\n' >"$T/link_target.csv"
ln -sf "$T/link_target.csv" "$T/link.csv"
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv "$T/link.csv"
[ "$RC" -eq 0 ] && [ -L "$T/link.csv" ] && head -n 1 "$T/link_target.csv" | grep -q '^hardware,'
report $? "validate-gemm-latency --output-csv LINK writes the link's target and keeps the link" "exit $RC"
# Two names for one file are refused (the CSV would be lost).
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv "$T/same.out" --output-params "$T/./same.out"
fails_cleanly "validate-gemm-latency: --output-csv and --output-params naming one file exit 2" "also the"
# A file that is not writable is refused, not replaced.
printf 'keep\n' >"$T/ro.json"
chmod 0444 "$T/ro.json"
if [ "$(id -u)" -ne 0 ]; then
    run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-params "$T/ro.json"
    fails_cleanly "validate-gemm-latency: a read-only --output-params exits 2" "ro.json"
    [ "$(cat "$T/ro.json")" = keep ]
    report $? "validate-gemm-latency: the read-only file is unchanged" ""
fi
chmod 0644 "$T/ro.json"
# An input reached through a link in the data folder is still an input.
mkdir -p "$T/gemm_linked"
cp tests/data/gemm/tiny.csv "$T/linked_outside.csv"
cp "$T/linked_outside.csv" "$T/linked_outside_copy.csv"
ln -sf "$T/linked_outside.csv" "$T/gemm_linked/rows.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_linked" --output-csv "$T/linked_outside.csv"
fails_cleanly "validate-gemm-latency: an input linked into the data folder is not overwritten" "input files"
cmp -s "$T/linked_outside.csv" "$T/linked_outside_copy.csv"
report $? "validate-gemm-latency: the linked input is unchanged" ""

# /dev/stdout is stdout: the output there, the report on stderr.
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-params /dev/stdout
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/out" 2>/dev/null && why="stdout is not the JSON"
[ -z "$why" ] && ! grep -q "mape" "$T/err" && why="no report on stderr"
[ -z "$why" ] && [ ! -L /dev/stdout ] && [ -e /proc/self/fd/1 ] && why="/dev/stdout is no longer a link"
[ -z "$why" ]
report $? "validate-gemm-latency --output-params /dev/stdout: JSON on stdout, report on stderr" "$why"

# Inputs are never overwritten.
mkdir -p "$T/gemm_self"
cp tests/data/gemm/tiny.csv "$T/gemm_self/rows.csv"
cp "$T/gemm_self/rows.csv" "$T/gemm_self_copy.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_self" --output-csv "$T/gemm_self/rows.csv"
fails_cleanly "validate-gemm-latency: --output-csv naming an input file exits 2" "input files"
cmp -s "$T/gemm_self/rows.csv" "$T/gemm_self_copy.csv"
report $? "validate-gemm-latency: the input named by --output-csv is unchanged" ""
grep -v ',x,' tests/data/gemm/tiny.csv >"$T/cal_self.csv"
cp "$T/cal_self.csv" "$T/cal_self_copy.csv"
run "$BIN" calibrate --data "$T/cal_self.csv" --hardware a100_40gb_pcie -o "$T/cal_self.csv"
fails_cleanly "calibrate: -o naming the --data file exits 2" "input files"
cmp -s "$T/cal_self.csv" "$T/cal_self_copy.csv"
report $? "calibrate: the --data file named by -o is unchanged" ""

# One output on stdout at most; with one there, the report goes to stderr.
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv - --output-params -
fails_cleanly "validate-gemm-latency: two outputs on stdout exit 2" "stdout"
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --output-csv -
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && [ "$(head -n 1 "$T/out" | cut -d, -f1)" != hardware ] && why="stdout is not the CSV"
[ -z "$why" ] && grep -q "mape" "$T/out" && why="the report is on stdout too"
[ -z "$why" ] && ! grep -q "mape" "$T/err" && why="no report on stderr"
[ -z "$why" ]
report $? "validate-gemm-latency --output-csv -: the CSV on stdout, the report on stderr" "$why"

# Rows that cannot be scored: a non-finite latency or a flag other than
# 0/1 is a bad row, and nothing left to score is an error, not 0% MAPE.
mkdir -p "$T/gemm_allbad"
{
    echo "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,source"
    echo "t4,fp32,1,64,64,64,0,0,0,inf,x/y"
    echo "t4,fp32,1,64,64,64,0,0,5,10,x/y"
    echo "t4,fp32,1,64,64,64,2,0,0,10,x/y"
} >"$T/gemm_allbad/rows.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_allbad" --format json
fails_cleanly "validate-gemm-latency: only bad rows (inf latency, flags not 0/1) exit 2" "3 bad rows"

# The first bad row is named (file, line, column, what was expected).
run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["first_bad_row"].endswith("tiny.csv:9: m: expected a positive integer, got '"'"'x'"'"'"), d["first_bad_row"]' \
    "$T/out" 2>/dev/null && why="first_bad_row: $(grep -o '"first_bad_row": "[^"]*"' "$T/out")"
[ -z "$why" ]
report $? "validate-gemm-latency: the report names the first bad row's file, line and column" "$why"

# The folder walk does not follow a link to a folder (a loop) and reads
# only regular files: a FIFO or a link to /dev/zero named *.csv is skipped.
mkdir -p "$T/gemm_walk"
cp tests/data/gemm/tiny.csv "$T/gemm_walk/rows.csv"
ln -s . "$T/gemm_walk/self"
ln -s /dev/zero "$T/gemm_walk/zero.csv"
mkfifo "$T/gemm_walk/fifo.csv" 2>/dev/null || true
run timeout 20 "$BIN" validate-gemm-latency --data-dir "$T/gemm_walk" --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '"files": 1,' "$T/out" && why="$(head -c 200 "$T/out")"
[ -z "$why" ]
report $? "validate-gemm-latency: a link loop, a FIFO and a /dev/zero link in the folder are skipped" "$why"

# calibrate needs more training rows than parameters (one row fits any
# parameters exactly and would report a train error of 0).
printf 'hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us\nt4,fp32,1,64,64,64,0,0,0,30\n' \
    >"$T/cal_one.csv"
run "$BIN" calibrate --data "$T/cal_one.csv" --hardware t4 -o "$T/cal_one.yaml"
fails_cleanly "calibrate: one row for three parameters exits 2" "training rows"
[ ! -e "$T/cal_one.yaml" ]
report $? "calibrate: no output file when the fit is refused" ""

# An option followed by another option has no value, and the error names
# the option that lacks it; --opt=value works for both commands.
run "$BIN" validate-gemm-latency --data-dir --format json
fails_cleanly "validate-gemm-latency --data-dir --format json: names --data-dir" "data-dir: expected a value"
run "$BIN" calibrate --data --hardware t4 -o "$T/x.yaml"
fails_cleanly "calibrate --data --hardware t4: names --data" "data expects a value"
run "$BIN" calibrate --model "" --data "$T/x.csv" --hardware t4 -o "$T/x.yaml"
fails_cleanly "calibrate --model '': names --model" "model expects a value"
run "$BIN" validate-gemm-latency --data-dir=tests/data/gemm --format=json
[ "$RC" -eq 0 ] && grep -q '"rows": 6' "$T/out"
report $? "validate-gemm-latency accepts --opt=value" "exit $RC: $(first_err)"

# Quoted CSV fields (RFC 4180 within a line) keep their commas and quotes,
# and --output-csv quotes a name that needs it: the group round-trips.
mkdir -p "$T/gemm_quoted"
printf '%s\r\n' 'hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source' \
    '"t4",fp32,1,64,64,64,0,0,0,"30","volta_sgemm_32x32, sliced","my ""src"", a/b"' >"$T/gemm_quoted/rows.csv"
run "$BIN" validate-gemm-latency --data-dir "$T/gemm_quoted" --no-calibrate-fixed-overhead \
    --output-csv "$T/gemm_quoted_rows.csv"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["group"] for r in rows] == ["t4|my \"src\", a"], rows' "$T/gemm_quoted_rows.csv" 2>/dev/null &&
    why="$(cat "$T/gemm_quoted_rows.csv")"
[ -z "$why" ]
report $? "validate-gemm-latency: quoted fields are read whole and written back quoted" "$why"

for bad in 0.9 -1 lots; do
    run "$BIN" validate-gemm-latency --data-dir tests/data/gemm --host-overlap "$bad"
    fails_cleanly "validate-gemm-latency --host-overlap $bad exits 2 with one line" "host-overlap"
done

# ---- validate (general measurements, contract §4 JSONL) ----------------------

# vcheck DESC PYTHON [ARGS...]: exit 0 and the Python assertions (d is the
# JSON on stdout, sys.argv[1:] the ARGS) hold.
vcheck() {
    local desc=$1 code=$2
    shift 2
    local why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && ! python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
sys.argv = sys.argv[1:]
$code" "$T/out" "$@" 2>"$T/pyerr" && why="$(tail -n 1 "$T/pyerr"): $(head -c 300 "$T/out")"
    [ -z "$why" ]
    report $? "$desc" "$why"
}

run "$BIN" validate --help
[ "$RC" -eq 0 ] && grep -q -- '--calibrate-fixed-overhead' "$T/out"
report $? "validate --help exits 0 and documents its options" "exit $RC"

run "$BIN" validate --data tests/data/validate/tiny.jsonl --format json
vcheck "validate --format json: the contract §5 keys and counts on the tiny file" '
keys = ["model", "rows", "rows_failed", "calibration_rows", "rows_unknown_hw", "first_bad", "calibrated",
        "overall", "by_hardware", "by_kind", "by_source"]
assert all(k in d for k in keys), [k for k in keys if k not in d]
stat = {"rows", "mape", "median_ape", "p90_ape", "geomean_ratio", "signed_mean_error"}
assert set(d["overall"]) == stat, d["overall"]
assert d["model"] == "extended_roofline" and d["rows"] == 6 and d["rows_failed"] == 0
assert d["calibration_rows"] == 0 and d["rows_unknown_hw"] == 0 and d["first_bad"] is None and d["calibrated"] is False
assert {k: v["rows"] for k, v in d["by_kind"].items()} == {"gemm": 3, "rmsnorm": 1, "attention_decode": 1, "copy": 1}
assert {k: v["rows"] for k, v in d["by_hardware"].items()} == {"a100_40gb_pcie": 3, "h100_sxm": 3}
assert {k: v["rows"] for k, v in d["by_source"].items()} == {"bench/a": 3, "bench/b": 2, "unknown": 1}
assert all(set(v) == stat for g in ("by_kind", "by_hardware", "by_source") for v in d[g].values())
assert d["energy"]["rows"] == 2 and set(d["energy"]["overall"]) == stat'

run "$BIN" validate --data tests/data/validate/tiny.jsonl
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '^  overall  *6 ' "$T/out" && why="no overall row: $(head -n 3 "$T/out")"
[ -z "$why" ] && ! grep -q 'kind attention_decode' "$T/out" && why="no by-kind rows"
[ -z "$why" ]
report $? "validate: the table has overall and by-kind rows" "$why"

# Bad lines (invalid JSON, no measured, a negative latency, an unknown key,
# an op without k) are counted, the first named FILE:LINE; the unknown
# hardware line is counted apart; the good line is scored.
run "$BIN" validate --data tests/data/validate/bad.jsonl --format json
vcheck "validate: bad lines counted, the first named file:line, unknown hardware apart" '
assert d["rows"] == 1 and d["rows_failed"] == 5 and d["rows_unknown_hw"] == 1, d
assert d["first_bad"].startswith("tests/data/validate/bad.jsonl:2:") and "invalid JSON" in d["first_bad"], d["first_bad"]
assert d["first_unknown_hw"].startswith("tests/data/validate/bad.jsonl:6: hardware:") and "no_such_gpu" in d["first_unknown_hw"]'

# Each kind of bad line, alone after a good one, is the first bad line.
good='{"hardware": "t4", "op": {"kind": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "fp16"}, "measured": {"latency_s": 1e-5}}'
vbad() {
    printf '%s\n%s\n' "$good" "$1" >"$T/vbad.jsonl"
    run "$BIN" validate --data "$T/vbad.jsonl" --format json
    vcheck "validate: $3" '
assert d["rows"] == 1 and d["rows_failed"] == 1, d
assert d["first_bad"] == sys.argv[1] + ":2: " + sys.argv[2], d["first_bad"]' "$T/vbad.jsonl" "$2"
}
vbad '{"hardware": "t4", "op": {"kind": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "fp16"}}' \
    "measured: expected an object with latency_s (and optionally energy_j), got nothing (the key is missing)" \
    "a line without measured is named"
vbad '{"hardware": "t4", "op": {"kind": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "fp16"}, "measured": {"latency_s": -2e-5}}' \
    "measured.latency_s: expected a positive number of seconds, got '-2e-5'" "a negative latency is named"
vbad '{"hardware": "t4", "op": {"kind": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "fp16"}, "measured": {"latency_s": 1e-5}, "sorce": "x"}' \
    "sorce: expected one of hardware, clock_mhz, op, measured, source, timing, kernel, got an unknown key (did you mean 'source'?)" \
    "an unknown key is named with the closest valid one"
vbad '{"hardware": "t4", "op": {"kind": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "fp16", "tranpose_a": true}, "measured": {"latency_s": 1e-5}}' \
    "op.tranpose_a: unknown key in the short form of gemm (did you mean 'transpose_a'?)" \
    "an op that does not validate is named with the op's field"

# A folder: every *.jsonl under it, recursively and sorted (README.md is not read).
run "$BIN" validate --data tests/data/validate --format json
vcheck "validate --data DIR reads every *.jsonl under it" '
assert d["files"] == 3 and d["rows"] == 11 and d["rows_failed"] == 5 and d["rows_unknown_hw"] == 1, d
assert d["first_bad"].startswith("tests/data/validate/bad.jsonl:2:"), d["first_bad"]
assert d["by_hardware"]["t4"]["rows"] == 4'
run "$BIN" validate --data tests/data/validate/tiny.jsonl --data tests/data/validate/sub --format json
vcheck "validate: --data given twice adds both" 'assert d["files"] == 2 and d["rows"] == 10, d'

# An events line (CUDA events around one eager call) gets the host's dispatch:
# a longer interval raises its prediction; a kernel line is unchanged.
ev='{"hardware": "t4", "op": {"kind": "softmax", "shape": [4096, 1024], "dtype": "fp32"}, "measured": {"latency_s": 1e-4}, "timing": "events"}'
kl='{"hardware": "t4", "op": {"kind": "softmax", "shape": [4096, 1024], "dtype": "fp32"}, "measured": {"latency_s": 1e-4}, "timing": "kernel"}'
printf '%s\n%s\n' "$ev" "$kl" >"$T/vev.jsonl"
run "$BIN" validate --data "$T/vev.jsonl" --launch-interval-us 0 --output-csv "$T/vev0.csv"
run "$BIN" validate --data "$T/vev.jsonl" --launch-interval-us 50 --output-csv "$T/vev50.csv"
python3 -c "import csv, sys
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
d = [float(y['predicted_latency_s']) - float(x['predicted_latency_s']) for x, y in zip(a, b)]
assert abs(d[0] - 50e-6) < 1e-9 and d[1] == 0, d" "$T/vev0.csv" "$T/vev50.csv" 2>"$T/pyerr"
report $? "validate: --launch-interval-us adds the host dispatch to events lines only" "$(tail -n 1 "$T/pyerr")"
run "$BIN" validate --data "$T/vev.jsonl" --host no_such_host
[ "$RC" -eq 2 ] && grep -q "no measured host named 'no_such_host'" "$T/err"
report $? "validate --host: an unknown host is a usage error" "exit $RC: $(first_err)"

# Calibration moves each group's smallest predictions out of scoring.
run "$BIN" validate --data tests/data/validate --format json --calibrate-fixed-overhead
vcheck "validate --calibrate-fixed-overhead: calibration lines leave scoring" '
assert d["calibrated"] is True and d["calibration_rows"] == 4 and d["rows"] == 7, d
fo = {(g["hardware"], g["source"]): g for g in d["fixed_overhead"]}
assert fo[("t4", "bench/c")]["calibration_rows"] == 2 and fo[("t4", "bench/c")]["overhead_s"] > 0, fo
assert fo[("a100_40gb_pcie", "unknown")]["calibration_rows"] == 0
assert sum(g["calibration_rows"] for g in d["fixed_overhead"]) == d["calibration_rows"]'

# The per-line CSV: every predicted line, in file order, calibration marked.
run "$BIN" validate --data tests/data/validate --calibrate-fixed-overhead --output-csv "$T/v_rows.csv"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q 'mape' "$T/out" && why="no report on stdout"
[ -z "$why" ] && ! python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
head = "file,line,hardware,kind,source,measured_latency_s,predicted_latency_s,ape,bound,limiting"
assert open(sys.argv[1]).readline().startswith(head + ",calibration,")
assert len(rows) == 11 and sum(r["calibration"] == "1" for r in rows) == 4
assert [(r["file"], r["line"]) for r in rows][:2] == [("tests/data/validate/bad.jsonl", "1"), ("tests/data/validate/sub/more.jsonl", "1")]
r = [r for r in rows if r["file"].endswith("tiny.jsonl") and r["line"] == "5"][0]
assert r["kind"] == "attention_decode" and r["source"] == "bench/b" and r["hardware"] == "h100_sxm"
assert float(r["measured_latency_s"]) == 9e-05 and r["measured_energy_j"] == "0.03"
for r in rows:
    m, p = float(r["measured_latency_s"]), float(r["predicted_latency_s"])
    assert abs(abs(p - m) / m * 100 - float(r["ape"])) < 1e-3, r
    assert r["bound"] in ("compute", "memory", "overhead") and r["limiting"], r' "$T/v_rows.csv" 2>"$T/pyerr" &&
    why="$(tail -n 1 "$T/pyerr"): $(head -n 3 "$T/v_rows.csv")"
[ -z "$why" ]
report $? "validate --output-csv: one row per predicted line with ape, bound and limiting" "$why"

# Exit status 2 and one line: usage errors, unreadable input, nothing to score.
run "$BIN" validate
fails_cleanly "validate without --data exits 2 with one line" "expected --data"
run "$BIN" validate --data tests/data/validate/tiny.jsonl --frobnicate
fails_cleanly "validate with an unknown option exits 2 with one line" "frobnicate"
run "$BIN" validate --data tests/data/validate/tiny.jsonl --format yaml
fails_cleanly "validate --format yaml exits 2 with one line" "format"
run "$BIN" validate --data tests/data/validate/tiny.jsonl --model no_such_model
fails_cleanly "validate --model with an unknown name exits 2 with one line" "no_such_model"
run "$BIN" validate --data
fails_cleanly "validate --data without a value exits 2 with one line" "expected a value"
run "$BIN" validate --data "$T/no_such.jsonl"
fails_cleanly "validate on a missing file exits 2 with one line" "no_such.jsonl"
mkdir -p "$T/v_empty"
run "$BIN" validate --data "$T/v_empty"
fails_cleanly "validate on a folder without *.jsonl exits 2 with one line" "jsonl files under"
sed -n '2,5p' tests/data/validate/bad.jsonl >"$T/v_allbad.jsonl"
run "$BIN" validate --data "$T/v_allbad.jsonl" --format json
fails_cleanly "validate: only bad lines exit 2, naming the first" "4 bad.*v_allbad.jsonl:1:"
sed -n '6p' tests/data/validate/bad.jsonl >"$T/v_unknown.jsonl"
run "$BIN" validate --data "$T/v_unknown.jsonl"
fails_cleanly "validate: only unknown hardware exits 2" "1 of hardware not known"
head -n 1 tests/data/validate/tiny.jsonl >"$T/v_one.jsonl"
run "$BIN" validate --data "$T/v_one.jsonl" --calibrate-fixed-overhead
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ]
report $? "validate --calibrate-fixed-overhead: a group of one line has no calibration line and is scored" "$why"
run timeout 20 "$BIN" validate --data /dev/zero
fails_cleanly "validate --data /dev/zero ends with the line-length error" "at most 64 MiB"

# Outputs: never over an input, written all or none, - is stdout.
mkdir -p "$T/v_self"
cp tests/data/validate/tiny.jsonl "$T/v_self/m.jsonl"
cp "$T/v_self/m.jsonl" "$T/v_self_copy.jsonl"
run "$BIN" validate --data "$T/v_self" --output-csv "$T/v_self/m.jsonl"
fails_cleanly "validate: --output-csv naming a *.jsonl of a --data folder exits 2" "input files"
cmp -s "$T/v_self/m.jsonl" "$T/v_self_copy.jsonl"
report $? "validate: the input named by --output-csv is unchanged" ""
run "$BIN" validate --data tests/data/validate/tiny.jsonl --output-csv "$T/no_such_dir/rows.csv" --format json
fails_cleanly "validate: an unwritable --output-csv exits 2, one line, no report" "output-csv"
run "$BIN" validate --data tests/data/validate/tiny.jsonl --output-csv -
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && [ "$(head -n 1 "$T/out" | cut -d, -f1)" != file ] && why="stdout is not the CSV"
[ -z "$why" ] && [ "$(lines "$T/out")" -ne 7 ] && why="expected 7 CSV lines, got $(lines "$T/out")"
[ -z "$why" ] && ! grep -q "mape" "$T/err" && why="no report on stderr"
[ -z "$why" ]
report $? "validate --output-csv -: the CSV on stdout, the report on stderr" "$why"

# ---- endless and hostile input (issue 22) -------------------------------------

run timeout 20 "$BIN" predict --hardware h100_sxm --op /dev/zero
fails_cleanly "predict --op /dev/zero ends with the 64 MiB document error" "64 MiB"
run timeout 20 "$BIN" predict --hardware /dev/zero --op examples/gemm.yaml
fails_cleanly "predict --hardware /dev/zero ends with the 64 MiB document error" "64 MiB"
printf '%s\n' '{"kind": "gemm", "m": 8, "n": 8, "k": 8, "dtype": "bf16"}' >"$T/endless.jsonl"
head -c 70000000 /dev/zero >>"$T/endless.jsonl"
run timeout 20 "$BIN" predict --hardware h100_sxm --batch "$T/endless.jsonl"
why=""
[ "$RC" -eq 2 ] || why="exit $RC"
[ -z "$why" ] && [ "$(lines "$T/out")" -ne 1 ] && why="expected the first line's prediction, got $(lines "$T/out") lines"
[ -z "$why" ] && ! grep -q 'endless.jsonl:2: expected a line of at most 64 MiB' "$T/err" && why="stderr: $(first_err)"
[ -z "$why" ]
report $? "predict --batch: an over-long line is an error (exit 2), not end of input" "$why"
run timeout 20 "$BIN" predict --hardware h100_sxm --batch /dev/zero
fails_cleanly "predict --batch /dev/zero ends with the line-length error" "at most 64 MiB"
printf '%s\n' 'hello' >"$T/notjson.jsonl"
run "$BIN" predict --hardware h100_sxm --batch "$T/notjson.jsonl"
why=""
[ "$RC" -eq 1 ] || why="exit $RC"
[ -z "$why" ] && grep -q 'empty input' "$T/out" && why="$(cat "$T/out")"
[ -z "$why" ] && ! grep -q '"line": 1, "error": ".*invalid JSON' "$T/out" && why="$(cat "$T/out")"
[ -z "$why" ]
report $? "predict --batch: a non-JSON line is invalid JSON, not empty input" "$why"
printf 'kind: "gem\\nm"\nm: 8\n' >"$T/newline.yaml"
run "$BIN" predict --hardware h100_sxm --op "$T/newline.yaml"
fails_cleanly "a newline inside a quoted value stays one error line" "gem\\\\nm"
printf 'kind: "gemm\\0xyz"\nm: 8\nn: 8\nk: 8\ndtype: bf16\n' >"$T/nul.yaml"
run "$BIN" predict --hardware h100_sxm --op "$T/nul.yaml"
fails_cleanly "an embedded NUL in a string is refused" "NUL"
"$BIN" hardware show h100_sxm | sed '/name: hbm/s/bandwidth_bytes_per_s: [0-9.e+]*/bandwidth_bytes_per_s: 1e-300/' >"$T/tiny_bw.yaml"
for m in roofline extended_roofline effective_roofline; do
    run "$BIN" predict --hardware "$T/tiny_bw.yaml" --model "$m" --op examples/gemm.yaml
    fails_cleanly "predict --model $m: a non-finite prediction is an error, not null" "not a finite number"
done
printf '{"kind": "gemm", "m": 16384, "n": 16384, "k": 16384, "dtype": "bf16"}\n' >"$T/one.jsonl"
run "$BIN" predict --hardware "$T/tiny_bw.yaml" --batch "$T/one.jsonl"
why=""
[ "$RC" -eq 1 ] || why="exit $RC"
[ -z "$why" ] && ! grep -q '"line": 1, "error": ".*not a finite number' "$T/out" && why="$(cat "$T/out")"
[ -z "$why" ]
report $? "predict --batch: a non-finite prediction is a line error" "$why"

# ---- trace diff -------------------------------------------------------------
# The H100 and MI300X runs of each shipped model: contract §8 keys in order,
# and every group of each side's `trace report --format json` appears once
# with exactly that report's count and kernel time.

for m in bert falcon qwen; do
    A=tests/data/traces/h100_$m/trace.json.gz
    B=tests/data/traces/mi300_$m/trace.json.gz
    "$BIN" trace report "$A" --format json >"$T/ra.json" 2>/dev/null
    "$BIN" trace report "$B" --format json >"$T/rb.json" 2>/dev/null
    run "$BIN" trace diff "$A" "$B" --format json
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && [ -s "$T/err" ] && why="stderr not empty: $(first_err)"
    if [ -z "$why" ]; then
        why=$(python3 - "$T/out" "$T/ra.json" "$T/rb.json" "$A" "$B" <<'EOF' 2>&1
import json, sys
doc = json.load(open(sys.argv[1]), object_pairs_hook=lambda p: p)
top = [k for k, _ in doc]
if top[:5] != ["a", "b", "groups", "categories", "timeline"]: sys.exit("top-level keys %s" % top)
d = json.load(open(sys.argv[1]))
if d["a"] != sys.argv[4] or d["b"] != sys.argv[5]: sys.exit("paths %r %r" % (d["a"], d["b"]))
for g in dict(doc)["groups"]:
    keys = [k for k, _ in g]
    if keys[:5] != ["name", "params", "a", "b", "delta_s"]: sys.exit("group keys %s" % keys)
reps = [json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))]
seen = [set(), set()]
prev = float("inf")
for g in d["groups"]:
    t = [0.0, 0.0]
    if g["delta_s"] > prev: sys.exit("not largest regression first at %s" % g["name"])
    prev = g["delta_s"]
    for s, key in enumerate("ab"):
        x = g[key]
        if x is None: continue
        r = reps[s]["groups"][x["index"]]
        if x["index"] in seen[s]: sys.exit("%s group %d twice" % (key, x["index"]))
        seen[s].add(x["index"])
        if (x["count"], x["kernel_time_s"]) != (r["count"], r["kernel_time_s"]):
            sys.exit("%s group %s: %r vs report %r" % (key, r["name"], x, (r["count"], r["kernel_time_s"])))
        t[s] = x["kernel_time_s"]
    if g["a"] is None and g["b"] is None: sys.exit("empty pair")
    if abs(g["delta_s"] - (t[1] - t[0])) > 1e-12 + 1e-9 * max(t): sys.exit("delta_s of %s" % g["name"])
for s, key in enumerate("ab"):
    if len(seen[s]) != len(reps[s]["groups"]): sys.exit("%s: %d of %d groups" % (key, len(seen[s]), len(reps[s]["groups"])))
    if d["timeline"][key] != reps[s]["timeline"]: sys.exit("%s timeline differs from its report" % key)
    cats = {c["category"]: c[key + "_s"] for c in d["categories"]}
    for c in reps[s]["categories"]:
        if cats.get(c["category"]) != c["kernel_time_s"]: sys.exit("%s category %s" % (key, c["category"]))
EOF
)
    fi
    [ -z "$why" ]
    report $? "trace diff h100_$m mi300_$m --format json: every group of both reports, exact counts and times" "$why"
done

A=tests/data/traces/h100_qwen/trace.json.gz
B=tests/data/traces/mi300_qwen/trace.json.gz
run "$BIN" trace diff "$A" "$B" --top 3
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '^GPU timeline' "$T/out" && why="no timeline"
[ -z "$why" ] && ! grep -q '^Categories' "$T/out" && why="no categories"
[ -z "$why" ] && ! grep -q '^Largest regressions (B slower), top 3' "$T/out" && why="no regressions section"
[ -z "$why" ] && [ "$(awk '/^Largest regressions/ { on = 1; next } on && /^$/ { exit } on && !/^    B:/ { n++ } END { print n - 1 }' "$T/out")" -ne 3 ] && why="not 3 regression rows"
[ -z "$why" ]
report $? "trace diff --top 3: timeline, categories, 3 regressions" "$why"

run "$BIN" trace diff "$A" "$B" --format csv
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
"$BIN" trace diff "$A" "$B" --format json >"$T/d.json" 2>/dev/null
if [ -z "$why" ]; then
    why=$(python3 - "$T/out" "$T/d.json" <<'EOF' 2>&1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
d = json.load(open(sys.argv[2]))
if len(rows) != len(d["groups"]): sys.exit("%d rows, %d JSON groups" % (len(rows), len(d["groups"])))
for r, g in zip(rows, d["groups"]):
    if r["name"] != g["name"] or float(r["delta_s"]) != g["delta_s"]: sys.exit("row %s differs" % r["name"])
EOF
)
fi
[ -z "$why" ]
report $? "trace diff --format csv: one row per JSON group, same order" "$why"

run "$BIN" trace diff "$A" "$A" --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && grep -q '"delta_s": [-1-9]' "$T/out" && why="a non-zero delta in a self diff"
[ -z "$why" ] && grep -Eq '"match": "(params|place|a_only|b_only)"' "$T/out" && why="a pair not by args"
[ -z "$why" ]
report $? "trace diff A A: every group pairs by args with delta 0" "$why"

run "$BIN" trace diff --help
[ "$RC" -eq 0 ] && grep -q 'usage: opmodel trace diff A B' "$T/out"
report $? "trace diff --help exits 0" "exit $RC"

run "$BIN" trace diff "$A" "$T/missing.json.gz"
fails_cleanly "trace diff with a missing B exits 2 with one line" "missing.json.gz"
run "$BIN" trace diff "$T/missing.json.gz" "$B"
fails_cleanly "trace diff with a missing A exits 2 with one line" "missing.json.gz"
printf 'kind: gemm\n' >"$T/not_a_trace.json"
run "$BIN" trace diff "$A" "$T/not_a_trace.json"
fails_cleanly "trace diff with B not a trace exits 2 with one line" "not_a_trace"
run "$BIN" trace diff examples/gemm.yaml "$B"
fails_cleanly "trace diff with A a YAML file exits 2 with one line" "gemm.yaml"
run "$BIN" trace diff "$A"
fails_cleanly "trace diff with one trace exits 2 with one line" "two trace files"
run "$BIN" trace diff "$A" "$B" "$B"
fails_cleanly "trace diff with three traces exits 2 with one line" "unexpected argument"
run "$BIN" trace diff "$A" "$B" --format xml
fails_cleanly "trace diff --format xml exits 2 with one line" "format"
run "$BIN" trace diff "$A" "$B" --top -1
fails_cleanly "trace diff --top -1 exits 2 with one line" "top"
run "$BIN" trace diff "$A" "$B" --hardware no_such_gpu
fails_cleanly "trace diff --hardware unknown exits 2 with one line" "no_such_gpu"
run "$BIN" trace diff - - 
fails_cleanly "trace diff - - exits 2 with one line" "stdin"
# ---- llm: whole-model rollups -----------------------------------------------
run "$BIN" llm --config llama3_70b --hardware tests/data/mi300x_golden.yaml --phase decode --context 2048 \
    --model roofline --only gemm,attention --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["latency_s"] * 1e3 - 26.36) <= 0.005, d["latency_s"]
assert d["params"] == 70553706496, d["params"]
for k in ("tokens_per_s", "energy_j", "mfu", "by_kind", "layers", "ops"): assert k in d, k
for k in ("weights_bytes", "kv_cache_bytes", "activation_bytes", "optimizer_bytes", "capacity_bytes"): assert k in d["memory"], k
us = {o["name"]: o["latency_s"] * 1e6 for o in d["ops"]}
for n, v in {"q": 25.3, "k": 3.2, "v": 3.2, "o": 25.3, "gate": 88.6, "up": 88.6, "down": 88.6, "attention": 1.6, "lm_head": 396.5}.items():
    assert round(us[n], 1) == v, (n, us[n])
assert {b["kind"] for b in d["by_kind"]} == {"gemm", "attention_decode"}
' "$T/out" 2>"$T/py" && why="$(tail -n 1 "$T/py")"
[ -z "$why" ]
report $? "llm: the seed's Llama-3-70B decode on MI300X (26.36 ms/token, per-op us)" "$why"
run "$BIN" llm --config llama3_70b --hardware tests/data/mi300x_golden.yaml --phase prefill --seq 2048 \
    --model roofline --only gemm,attention --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert abs(d["latency_s"]*1e3-409.85) <= 0.01, d["latency_s"]' "$T/out" 2>"$T/py" && why="$(tail -n 1 "$T/py")"
[ -z "$why" ]
report $? "llm: the seed's Llama-3-70B prefill of 2048 tokens (409.85 ms)" "$why"
run "$BIN" llm --config llama3_405b --hardware h100_sxm --phase decode
fails_cleanly "llm: Llama-3-405B bf16 decode on one H100 is refused with the byte counts" "weights 811706777600 .* > 80000000000 bytes"
run "$BIN" llm --config lama3_70b --hardware h100_sxm --phase decode
fails_cleanly "llm: an unknown config suggests the nearest" "did you mean 'llama3_70b'"
printf 'num_hidden_layers: 2\nhidden_size: [1]\nnum_attention_heads: 2\nvocab_size: 8\n' >"$T/bad_model.yaml"
run "$BIN" llm --config "$T/bad_model.yaml" --hardware h100_sxm --phase decode
fails_cleanly "llm: a bad config field is one line with file:line and field" "bad_model.yaml:2.*hidden_size"
run "$BIN" llm --config llama3_70b --hardware h100_sxm --phase decode --tp 3
fails_cleanly "llm: a tp that does not divide the heads is refused" "tp"
for m in $("$BIN" llm --list); do
    case $m in mixtral_8x7b | deepseek_v3 | qwen3_30b_a3b | qwen3_235b_a22b | jamba_v0_1) ep=8 ;; *) ep=1 ;; esac
    run "$BIN" llm --config "$m" --hardware h200_sxm --phase prefill --seq 128 --tp 4 --pp 2 --ep "$ep" --format csv
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && [ "$(head -n 1 "$T/out")" != "name,kind,layer_group,count,shards,latency_s,flops,bytes,energy_j,bound" ] && why="header: $(head -n 1 "$T/out")"
    [ -z "$why" ]
    report $? "llm: $m prefill at tp 4 pp 2 ep $ep predicts every op" "$why"
done
run "$BIN" llm --config mixtral_8x7b --hardware h100_sxm --phase train --seq 1024 --tp 8 --ep 8 --format json --emit-workload "$T/wl.jsonl"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ph = {}
for line in open(sys.argv[2]):
    o = json.loads(line); assert o["count"] >= 1; ph[o["phase"]] = ph.get(o["phase"], 0) + 1
assert ph["train_fwd"] == ph["train_bwd"] and ph.get("inference") == 1, ph
assert d["memory"]["optimizer_bytes"] > 0
assert any(o["kind"] == "all_to_all" and o["comm_bytes"] > 0 for o in d["ops"])
' "$T/out" "$T/wl.jsonl" 2>"$T/py" && why="$(tail -n 1 "$T/py")"
[ -z "$why" ]
report $? "llm: train has forward, backward and the Adam update; --emit-workload writes one op per line" "$why"
first=$(head -n 1 "$T/wl.jsonl" | sed 's/^{"count": [0-9]*, /{/')
printf '%s\n' "$first" >"$T/wl_one.json"
run "$BIN" predict --hardware h100_sxm --op "$T/wl_one.json"
one_json_line "llm: an --emit-workload line (less count) is an op predict reads"
for cfg in jamba_v0_1 llama3_8b; do
    run "$BIN" llm --config "$cfg" --hardware h100_sxm --phase train --seq 512 --tp 8 --pp 4 --format json \
        --output-svg-kinds "$T/kinds.svg" --output-svg-roofline "$T/roof.svg"
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && ! python3 -c '
import json, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
d = json.load(open(sys.argv[1]))
roof = ET.parse(sys.argv[3]).getroot()
assert roof.tag == ns + "svg", roof.tag
points = roof.findall(ns + "circle[@class=\"op\"]")
ops = [o for o in d["ops"] if o["bound"] != "link"]
assert len(points) == len(ops), (len(points), len(ops))
assert roof.findall(ns + "line[@class=\"roof\"]") and roof.findall(ns + "line[@class=\"slope\"]")
kinds = ET.parse(sys.argv[2]).getroot()
segs = kinds.findall(ns + "rect[@class=\"segment\"]")
total = sum(float(s.find(ns + "title").text.split()[-2]) for s in segs) / 1e3
assert abs(total - d["latency_s"]) <= 1e-5 * d["latency_s"], (total, d["latency_s"])
assert any(" bwd" in s.find(ns + "title").text for s in segs)
' "$T/out" "$T/kinds.svg" "$T/roof.svg" 2>"$T/py" && why="$(tail -n 1 "$T/py")"
    [ -z "$why" ]
    report $? "llm: $cfg --output-svg-kinds/--output-svg-roofline are well-formed SVG, a point per op, the bars sum to the step" "$why"
done
run "$BIN" llm --config llama3_70b --hardware h100_sxm --phase decode --tp 8 --sweep batch=1..64*8:context=1024,131072 --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! python3 -c '
import json, sys
pts = json.load(open(sys.argv[1]))["sweep"]
assert [(p["batch"], p["context"]) for p in pts] == [(b, c) for b in (1, 8, 64) for c in (1024, 131072)], pts
for p in pts: assert p["latency_s"] > 0 and p["tokens_per_s"] > 0 and p["time_per_output_token_s"] == p["latency_s"]
by = {(p["batch"], p["context"]): p for p in pts}
for b in (1, 8, 64): assert by[(b, 131072)]["latency_s"] > by[(b, 1024)]["latency_s"]
assert by[(64, 131072)]["fits"] is False and by[(1, 1024)]["fits"] is True
' "$T/out" 2>"$T/py" && why="$(tail -n 1 "$T/py")"
[ -z "$why" ]
report $? "llm: --sweep gives one row per (batch, context) point, a point that does not fit is a row with fits false" "$why"
run "$BIN" llm --config llama3_8b --hardware h100_sxm --phase decode --sweep batch=4..1*2
fails_cleanly "llm: a bad --sweep range is one line, exit 2" "LO <= HI"
run "$BIN" llm --config gpt2 --hardware a10 --phase decode --sweep 'context=1..9223372036854775807*2'
fails_cleanly "llm: a --sweep point out of range fails before any row is printed, naming its field" "context: expected at most 2^32"
run "$BIN" llm --config llama3_8b --hardware h100_sxm --phase decode --sweep width=1
fails_cleanly "llm: an unknown --sweep axis is one line, exit 2" "batch=, context= or seq="
run "$BIN" llm --config llama3_8b --hardware h100_sxm --phase decode --output-svg-kinds "$T/no/such/dir/k.svg"
fails_cleanly "llm: an unwritable --output-svg-kinds is one line, exit 2" "output-svg-kinds"
# ---- graph traces (--capture, --window): sglang_decode, one hipGraphLaunch replaying 544 kernels ----
GR=tests/data/traces/sglang_decode
run "$BIN" trace report "$GR/trace.json.gz" --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '"graph_launches": {"launches": 1, "gpu_events": 544, "kernel_time_s": 0.009656404}' "$T/out" && why="$(grep graph_launches "$T/out")"
[ -z "$why" ]
report $? "trace report: without --capture the JSON says 544 GPU events, 9.656 ms sit in 1 graph launch" "$why"
run "$BIN" trace report "$GR/trace.json.gz" --top 1
grep -q '^  in graph launches (1) *9656.404' "$T/out"
report $? "trace report: the timeline table has the in-graph-launches line" "$(grep 'graph' "$T/out")"
for cap in "$GR/capture" "$GR/capture/bs_32_rank0.json.gz"; do
    run "$BIN" trace report "$GR/trace.json.gz" --capture "$cap" --format csv
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && why=$(python3 tools/graph_match.py "$T/out" "$GR/unified_perf_summary.csv" --tracelens-names |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print("" if j["matched_pct"] >= 95 and j["graph_launch_pct"] < 5 else j)')
    [ -z "$why" ]
    report $? "trace report --capture $cap: >= 95% of the reference kernel time matched by key, count and time, < 5% in graph launches" "$why"
done
run "$BIN" trace report "$GR/trace.json.gz" --capture "$GR/capture" --format json
grep -q '"graph_launches": {"launches": 1, "gpu_events": 0, "kernel_time_s": 0}' "$T/out"
report $? "trace report --capture: nothing left under the graph launch" "$(grep graph_launches "$T/out")"
mkdir -p "$T/caps" && cp "$GR/capture/bs_32_rank0.json.gz" "$T/caps/a.json.gz" && cp "$GR/capture/bs_32_rank0.json.gz" "$T/caps/b.json"
run "$BIN" trace report "$GR/trace.json.gz" --capture "$T/caps"
fails_cleanly "trace report --capture DIR with two traces: one line, exit 2" "more than one capture trace"
run "$BIN" trace report "$GR/trace.json.gz" --capture "$T/nonexistent.json"
fails_cleanly "trace report --capture of a missing file: one line, exit 2"
for w in "5" "5:1" "-1:3" "a:b" "1:" ; do
    run "$BIN" trace report "$GR/trace.json.gz" --window "$w"
    fails_cleanly "trace report --window $w: one line, exit 2" "window"
done
run "$BIN" trace report "$GR/trace.json.gz" --window 0:0.001 --format json
grep -q '"groups": \[\]' "$T/out"
report $? "trace report --window 0:0.001: a window with no whole event gives an empty report" "$(head -c 300 "$T/out")"
run "$BIN" trace report "$GR/trace.json.gz" --window 0:1e9 --format csv
cmp -s "$T/out" <("$BIN" trace report "$GR/trace.json.gz" --format csv 2>/dev/null)
report $? "trace report --window covering the whole trace changes nothing"

# ---- calibrate-energy and the energy keys of every prediction ----
EN=tests/data/energy/a100_synthetic.jsonl
run "$BIN" calibrate-energy --data "$EN" --hardware a100_40gb_pcie -o "$T/ecal.yaml"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
# The rows were made with compute x0.6, dram x1.3, l2 x0.5, idle x0.7 (tests/data/energy/README.md).
[ -z "$why" ] && why=$(awk '$1 == "compute" { c = $2 } $1 == "dram" { d = $2 } $1 == "l2" { l = $2 } $1 == "static" { s = $2 }
    $1 == "held-out" { h = $2; a = $3 }
    function off(x, t) { return x < t * 0.99 || x > t * 1.01 }
    END { if (off(c, 0.6) || off(d, 1.3) || off(l, 0.5) || off(s, 0.7)) print "multipliers " c, d, l, s;
          else if (!(h > 5) || !(a < 0.5)) print "held-out MAPE " h " -> " a }' "$T/out")
report $([ -z "$why" ]; echo $?) "calibrate-energy recovers the synthetic rows' multipliers; held-out error falls" "$why"
first=$(head -1 "$EN")
measured=$(printf '%s' "$first" | sed 's/.*"energy_j": \([^,}]*\).*/\1/')
printf '%s' "$first" | sed 's/.*"op": \({[^}]*}\).*/\1/' > "$T/eop.json"
run "$BIN" predict --hardware "$T/ecal.yaml" --model extended_roofline --op "$T/eop.json"
why=$(awk -v m="$measured" '{ if (match($0, /"energy_j": [^,]*/)) { e = substr($0, RSTART + 12, RLENGTH - 12) + 0;
      if (e < m * 0.999 || e > m * 1.001) print "predicted " e " J, measured " m " J" } else print "no energy_j" }' "$T/out")
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
report $([ -z "$why" ]; echo $?) "calibrate-energy output loads in predict and reproduces a row's energy" "$why"
grep -q '"average_power_w": ' "$T/out" && grep -q '"energy_breakdown": {"compute_j": ' "$T/out"
report $? "predict JSON has energy_breakdown and average_power_w"
run "$BIN" calibrate-energy --hardware a100_40gb_pcie -o "$T/x.yaml"
fails_cleanly "calibrate-energy without --data: one line, exit 2" "data"
run "$BIN" calibrate-energy --data data/kernels/vidur_memory_bound.jsonl --hardware a100_40gb_pcie -o "$T/x.yaml"
fails_cleanly "calibrate-energy on lines without measured energy: one line, exit 2" "energy_j"
[ ! -e "$T/x.yaml" ]
report $? "calibrate-energy writes nothing when it fails"
run "$BIN" validate --data "$EN" --format json
grep -q '"energy": {"rows": 48' "$T/out"
report $? "validate scores energy on lines with measured.energy_j" "$(head -c 200 "$T/out")"

run "$BIN" validate-gemm-latency --data-dir tests/data/energy/gemm --no-calibrate-fixed-overhead --format json
why=$(printf '%s' "$(cat "$T/out")" | tr -d '\n' | grep -o '"energy": {"rows": 12, "overall": {[^}]*}' | grep -o '"mape": [0-9.]*')
[ "$why" = '"mape": 20.0000' ] && why=""
report $([ -z "$why" ]; echo $?) "validate-gemm-latency scores energy_j rows (energy x1.25 of the model's: 20% MAPE)" "$why"
# ---- trace report --iterations / --kernel-hints -------------------------------

RN=tests/data/traces/mi300_resnet_ckpt/trace.json.gz
run "$BIN" trace report "$RN" --iterations --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 - "$T/out" <<'EOF2' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
it = d["iterations"]
assert list(d)[-1] == "iterations", list(d)[-3:]
assert it["method"] == "profiler_step" and it["count"] == 3, it
assert [x["name"] for x in it["iterations"]] == ["ProfilerStep#15", "ProfilerStep#16", "ProfilerStep#17"]
assert it["min_s"] <= it["median_s"] <= it["max_s"]
assert it["outlier"]["index"] in (0, 1, 2)
EOF2
)
report $? "trace report --iterations --format json: 3 ProfilerSteps under \"iterations\"" "$why"
run "$BIN" trace report "$RN" --iterations
grep -q '^Iterations: 3, by ProfilerStep# annotations' "$T/out"
report $? "trace report --iterations: the table section" "$(grep -m1 Iterations "$T/out")"
run "$BIN" trace report tests/data/traces/h100_falcon/trace.json.gz --kernel-hints --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 - "$T/out" <<'EOF2' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernel_hints"]
assert len(k) >= 3, k
for c in k:
    g = d["groups"][c["group"]]
    assert g["kind"] == "gemm" and c["kernel"] in g["kernels"], (c, g)
    assert c["hinted_time_s"] > 0 and c["auto_time_s"] > 0
EOF2
)
report $? "trace report --kernel-hints --format json: one entry per GEMM group with a named kernel" "$why"
run "$BIN" trace report "$TRACE" --kernel-hints --hardware mi300x --iterations --format csv
cmp -s "$T/out" <("$BIN" trace report "$TRACE" --hardware mi300x --format csv 2>/dev/null)
report $? "trace report --kernel-hints --iterations leave the CSV unchanged"
run "$BIN" trace report tests/data/traces/normalization/trace.json.gz --kernel-hints --hardware no_such_gpu
fails_cleanly "trace report --kernel-hints with an unknown hardware: one line, exit 2"

# ---- trace report DIR / --ranks: multi-rank ------------------------------------

MR=tests/data/traces/multirank
run "$BIN" trace report "$MR" --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 - "$T/out" <<'EOF2' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rank_count"] == 4 and d["matched_collectives"] == 3, d
assert [r["trace"].rsplit("/", 1)[1] for r in d["ranks"]] == ["rank0.json", "rank1.json", "rank2.json", "rank3.json"]
c = d["collectives"][0]
assert c["collective"] == "allreduce" and c["algorithm"] == "ring" and c["message_bytes"] == 2097152, c
assert c["slowest_rank"] == 2 and abs(c["skew_s"] - 50e-6) < 1e-12, c
assert abs(c["busbw_bytes_per_s"] - 2097152 / 60e-6 * 1.5) < 1, c
EOF2
)
report $? "trace report DIR --format json: 4 ranks, 3 collectives, bytes/busbw/skew" "$why"
run "$BIN" trace report --ranks "$MR/rank3.json" "$MR/rank1.json"
grep -q '^Ranks: 2, collectives matched on every rank: 3' "$T/out"
report $? "trace report --ranks A B: ranks in the order given" "$(head -n 1 "$T/out")"
run "$BIN" trace report "$MR" --format csv
fails_cleanly "trace report DIR --format csv: one line, exit 2" "table or json"
mkdir -p "$T/emptydir"
run "$BIN" trace report "$T/emptydir"
fails_cleanly "trace report of a folder without traces: one line, exit 2" "holds no"
# ---- workload and validate-artifact -----------------------------------------

EK=data/energaizer/workloads/all/gpt2model_gpt2_pbf16_b1_s128_modeprefill.json
run "$BIN" workload "$EK" --hardware a100_40gb_pcie --clock-mhz 900 --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("" if j["kernels"] == 254 and j["implied"] == 12 and abs(j["energy_j"] - j["op_energy_j"] - j["idle_energy_j"]) < 1e-9 * j["energy_j"] and j["latency_s"] > j["device_time_s"] else j["kernels"])' "$T/out")
[ -z "$why" ]
report $? "workload: a GPT-2 kernel list, 242 listed + 12 implied mask selects, energy = ops + idle gaps" "$why"
implied_lat=$(sed -n 's/.*"latency_s": \([0-9.e+-]*\),.*/\1/p' "$T/out" | head -n 1)
run "$BIN" workload "$EK" --hardware a100_40gb_pcie --clock-mhz 900 --format json --as-listed
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("" if j["kernels"] == 242 and j["implied"] == 0 and j["latency_s"] < float(sys.argv[2]) else j["kernels"])' "$T/out" "$implied_lat")
[ -z "$why" ]
report $? "workload --as-listed: the kernel list as it is, 242 kernels, faster than with the implied ones" "$why"
eager=$(sed -n 's/.*"latency_s": \([0-9.e+-]*\),.*/\1/p' "$T/out" | head -n 1)
run "$BIN" workload "$EK" --hardware a100_40gb_pcie --clock-mhz 900 --mode graph --format json
graph=$(sed -n 's/.*"latency_s": \([0-9.e+-]*\),.*/\1/p' "$T/out" | head -n 1)
python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) < float(sys.argv[1]) else 1)' "$eager" "$graph"
report $? "workload --mode graph: no host gaps, shorter than eager" "eager $eager graph $graph"
"$BIN" llm --config gpt2 --hardware a100_40gb_pcie --phase prefill --seq 128 --emit-workload "$T/llm.jsonl" >/dev/null 2>&1
run "$BIN" workload "$T/llm.jsonl" --hardware a100_40gb_pcie --format csv
[ "$RC" -eq 0 ] && grep -q '^total,total,' "$T/out"
report $? "workload reads what llm --emit-workload writes (counts included)" "$(first_err)"
printf '[[{"dim":4,"op":"relu","prec":"bf16"},["elementwise"]],[{"dim":-1,"op":"relu","prec":"bf16"},["elementwise"]]]' > "$T/bad_kl.json"
run "$BIN" workload "$T/bad_kl.json" --hardware a10
fails_cleanly "workload: a bad kernel-list entry: one line FILE:ENTRY:FIELD, exit 2" "bad_kl.json:1:dim"
run "$BIN" workload "$EK" --hardware a10 --mode lazy
fails_cleanly "workload --mode lazy: one line, exit 2" "eager or graph"
run "$BIN" workload tests/data/traces/h100_bert/trace.json.gz --hardware h100_sxm --mode graph --format json
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("" if j["kernels"] > 0 and j["idle_s"] == 0 and any(e["kind"] == "gemm" for e in j["by_kind"]) else j["kernels"])' "$T/out")
[ -z "$why" ]
report $? "workload: a PyTorch trace's recognised ops, graph mode without gaps" "$why"
run "$BIN" workload "$EK" --hardware a10 --host energaizer --format json
grep -q '"launch_interval_s": 3.1e-05' "$T/out"
report $? "workload --host energaizer takes that host's 31 us interval" "$(first_err)"
run "$BIN" workload "$EK" --hardware a10 --host nowhere
fails_cleanly "workload --host of an unknown host: one line, exit 2" "no measured host"
run "$BIN" validate-artifact --format json --output-csv "$T/art.csv" --output-plot "$T/art.svg"
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
ok = j["runs"] == 447 and j["calibration_runs"] <= 8 and all(k in j for k in ("model","runs_matched","launch_interval_s","overall","by_hardware","by_family","by_clock"))
ok = ok and all(set(j["overall"][m]) >= {"mape","median_ape","p90_ape","geomean_ratio","signed_mean_error"} for m in ("time","energy","power"))
ok = ok and j["overall"]["time"]["rows"] + j["calibration_runs"] + j["runs_out_of_memory"] == j["runs_matched"]
ok = ok and len(j["unmatched"]) == j["runs"] - j["runs_matched"] + j["runs_out_of_memory"]
print("" if ok else "bad summary")' "$T/out")
[ -z "$why" ] && ! grep -q '^<svg' "$T/art.svg" && why="no svg"
[ -z "$why" ] && [ "$(lines "$T/art.csv")" -ne 448 ] && why="csv has $(lines "$T/art.csv") lines"
[ -z "$why" ] && ! grep -q '"kernel_lists": "with_implied", "implied_kernels": [1-9]' "$T/out" && why="no implied kernels"
[ -z "$why" ]
report $? "validate-artifact: 447 runs, calibration runs not scored, unmatched listed, csv and svg" "$why"
run "$BIN" validate-artifact --format json --as-listed
grep -q '"kernel_lists": "as_listed", "implied_kernels": 0,' "$T/out"
report $? "validate-artifact --as-listed: the kernel lists as shipped" "$(first_err)"
run "$BIN" validate-artifact --format json
cp "$T/out" "$T/art_harness.json"
run "$BIN" validate-artifact --format json --no-harness-startup
why=$(python3 -c '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
s=a["harness_startup_s"]
ok = a["harness_startup"] is True and b["harness_startup"] is False and len(s) == 3 and all(v > 0 for v in s.values())
ok = ok and all(a["harness_startup_runs"][f] > 0 for f in s) and b["harness_startup_s"] == s
ok = ok and a["uncalibrated"]["overall"]["time"]["geomean_ratio"] > b["uncalibrated"]["overall"]["time"]["geomean_ratio"]
print("" if ok else "harness start-up: %s / %s" % (s, b["harness_startup_s"]))' "$T/art_harness.json" "$T/out")
[ -z "$why" ]
report $? "validate-artifact: the harness start-up measured per file on unmatched runs lengthens every prediction; --no-harness-startup leaves it out" "$why"
mkdir -p "$T/emptyart/workloads/all" "$T/emptyart/measurements"
echo '[]' > "$T/emptyart/workloads/all/foo_bar_pbf16_b1_s128_modeprefill.json"
printf 'workload,energy,time,avg_freq\nfoo_bar_pbf16_b1_s128_modeprefill_freq900_iter1.csv,1,1,900\n' > "$T/emptyart/measurements/a10_e2e.csv"
run "$BIN" validate-artifact --data-dir "$T/emptyart" --output-plot "$T/emptyart.svg"
fails_cleanly "validate-artifact: a kernel list without kernels is an error naming the file" "at least one kernel"
run "$BIN" validate-artifact --data-dir "$T/nonexistent"
fails_cleanly "validate-artifact of a missing folder: one line, exit 2"

# tools/gemm_same_shape.py: shapes matched on (batch, m, n, k, transposes), the
# repeated one by its median, unmatched ones left out, B / A by m bucket.
HDR='hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us'
printf '%s\nh,fp16,1,1,64,64,0,1,0,2\nh,fp16,1,512,64,64,0,1,0,10\nh,fp16,1,512,64,64,0,1,0,30\nh,fp16,1,8,8,8,0,1,0,5\n' "$HDR" > "$T/ssa.csv"
printf '%s\nh,bf16,1,1,64,64,0,1,0,3\nh,bf16,1,512,64,64,0,1,0,40\nh,bf16,1,8,8,8,1,1,0,9\n' "$HDR" > "$T/ssb.csv"
run python3 tools/gemm_same_shape.py "$T/ssa.csv" "$T/ssb.csv" --rows
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '^2 shapes in common' "$T/out" && why="expected 2 shapes in common"
[ -z "$why" ] && ! grep -q '^| 1-16 | 1 | 1.50 |' "$T/out" && why="m = 1 ratio is not 3 / 2"
[ -z "$why" ] && ! grep -q '^| 257-512 | 1 | 2.00 |' "$T/out" && why="m = 512 ratio is not 40 / median(10, 30)"
[ -z "$why" ]
report $? "gemm_same_shape.py: matched shapes, median of repeats, B / A by m bucket" "$why"
run python3 tools/gemm_same_shape.py "$T/ssa.csv" "$T/ssa.csv"
[ "$RC" -eq 0 ] && grep -q '^| all | 3 | 1.00 | 1.00 |' "$T/out"
report $? "gemm_same_shape.py: a file against itself is 1.00 everywhere" "$(first_err)"

# tools/public_check.py: every row of the shipped held-out file predicts on its
# built-in entry with both kernel models, each ratio a positive number, and
# the physical checks cover every built-in entry (data/public/README.md).
run python3 tools/public_check.py --opmodel "$BIN" --format json --sanity --models extended_roofline,effective_roofline
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && why=$(python3 - "$T/out" data/public/figures.csv "$BIN" <<'PY'
import csv, json, math, subprocess, sys
d = json.load(open(sys.argv[1]))
ids = [r["id"] for r in csv.DictReader(open(sys.argv[2]))]
hw = [l.split()[0] for l in subprocess.run([sys.argv[3], "hardware", "list"], capture_output=True, text=True).stdout.splitlines()[1:]]
for m in ("extended_roofline", "effective_roofline"):
    got = sorted(r["id"] for r in d["rows"] if r["model"] == m)
    if got != sorted(ids):
        print("%s: rows %d of %d" % (m, len(got), len(ids))); sys.exit()
bad = [r["id"] for r in d["rows"] if not (r["ratio"] > 0 and math.isfinite(r["ratio"]))]
if bad:
    print("non-positive ratio: " + ",".join(bad)); sys.exit()
# Held-out and in-config rows are summarised apart, each over its own rows.
cfg = sum(1 for r in csv.DictReader(open(sys.argv[2])) if r["in_config"] == "yes")
for m, s in d["summary"].items():
    if (s["held_out_rows"], s["in_config_rows"]) != (len(ids) - cfg, cfg):
        print("%s: summary counts %d held out, %d in config" % (m, s["held_out_rows"], s["in_config_rows"])); sys.exit()
if sorted({r["hardware"] for r in d["sanity"]}) != sorted(hw):
    print("sanity misses entries"); sys.exit()
for r in d["sanity"]:
    if r["kind"] == "gpu" and not 0 < r.get("gemm_256_us", 0) < 50:
        print("%s: no small-GEMM floor" % r["hardware"]); sys.exit()
    if "gemm_bf16_frac" in r and not 0 < r["gemm_bf16_frac"] <= 1 + 1e-9:
        print("%s: GEMM above its dense peak" % r["hardware"]); sys.exit()
PY
)
[ -z "$why" ]
report $? "public_check.py: every shipped held-out row and every built-in entry predicts" "$why"
printf 'id,hardware,op,published_value,published_unit,harness,timing,in_config,source_key,note\nneg,h100_sxm,"{""kind"":""gemm"",""m"":64,""n"":64,""k"":64,""dtype"":""bf16""}",-1,TFLOPS,x,loop,no,x,\n' > "$T/pub_bad.csv"
run python3 tools/public_check.py --opmodel "$BIN" --figures "$T/pub_bad.csv"
[ "$RC" -eq 2 ] && [ ! -s "$T/out" ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q 'neg: published_value' "$T/err"
report $? "public_check.py: a bad published figure is one line naming the row, exit 2" "exit $RC: $(first_err)"

# tcgen05 MMAs run asynchronously beside the softmax warps: the same entry
# called wgmma (FA3's ping-pong loss) predicts a compute-bound prefill slower.
"$BIN" hardware show b200 > "$T/b200.yaml"
sed 's/^  matrix_instruction: tcgen05$/  matrix_instruction: wgmma/' "$T/b200.yaml" > "$T/b200_wgmma.yaml"
PF='{"kind":"attention_prefill","batch":1,"seq_q":16384,"seq_kv":16384,"heads":16,"kv_heads":16,"head_dim":128,"causal":false,"dtype":"bf16"}'
echo "$PF" | "$BIN" predict --hardware "$T/b200.yaml" --op - --model extended_roofline > "$T/pf_tc.json"
echo "$PF" | "$BIN" predict --hardware "$T/b200_wgmma.yaml" --op - --model extended_roofline > "$T/pf_wg.json"
awk -v a="$(latency "$T/pf_tc.json")" -v b="$(latency "$T/pf_wg.json")" 'BEGIN { exit !(a > 0 && b > a) }'
report $? "attention prefill: tcgen05 hides the softmax under the MMAs, wgmma's ping-pong does not" "tcgen05 $(latency "$T/pf_tc.json") wgmma $(latency "$T/pf_wg.json")"

# An MFMA entry without an achievable fraction takes the CDNA default, below
# the NVIDIA one: giving it 0.8 makes a large GEMM faster, and only the
# default case says so in the diagnostics.
"$BIN" hardware show mi355x > "$T/mi355x.yaml"
sed 's/^  matrix_instruction: mfma$/  matrix_instruction: mfma\n  tensor_achievable_fraction: {bf16: 0.8}/' "$T/mi355x.yaml" > "$T/mi355x_08.yaml"
G8='{"kind":"gemm","m":8192,"n":8192,"k":8192,"dtype":"bf16"}'
echo "$G8" | "$BIN" predict --hardware "$T/mi355x.yaml" --op - --model extended_roofline > "$T/g_def.json"
echo "$G8" | "$BIN" predict --hardware "$T/mi355x_08.yaml" --op - --model extended_roofline > "$T/g_08.json"
awk -v a="$(latency "$T/g_def.json")" -v b="$(latency "$T/g_08.json")" 'BEGIN { exit !(b > 0 && a > b) }' &&
    grep -q '"tensor_achievable_source": "default"' "$T/g_def.json" && ! grep -q 'tensor_achievable_source' "$T/g_08.json"
report $? "GEMM: an MFMA entry without a fraction runs below the NVIDIA default" "default $(latency "$T/g_def.json") 0.8 $(latency "$T/g_08.json")"

# A streaming kind on a systolic-array or matrix-engine part: the roofline,
# saying why, on the levels the part has (no CUDA grid on an fp32 peak it
# does not list).
for hw in tpu_v6e gaudi3; do
    run "$BIN" predict --hardware "$hw" --op examples/copy.yaml --model extended_roofline
    why=""
    [ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
    [ -z "$why" ] && ! grep -q '"fallback": "no M[XM][UE] (' "$T/out" && why="no MXU/MME fallback in the diagnostics"
    [ -z "$why" ] && grep -q '"l2"' "$T/out" && why="traffic on an L2 the part lacks"
    [ -z "$why" ]
    report $? "copy on $hw: the roofline with diagnostics.fallback" "$why"
done

# A compute-bound GEMM on a matrix-engine part with a published achievable
# fraction (Gaudi 3): the fallback is the roofline slowed by exactly
# 1/fraction and names its source; on a TPU (no figure) it is the roofline.
G4='{"kind":"gemm","m":8192,"n":8192,"k":8192,"dtype":"bf16"}'
for hw in gaudi3 tpu_v6e; do
    echo "$G4" | "$BIN" predict --hardware "$hw" --op - --model extended_roofline > "$T/fb_$hw.json"
    echo "$G4" | "$BIN" predict --hardware "$hw" --op - --model roofline > "$T/rf_$hw.json"
done
python3 - "$T" <<'PY'
import json, sys
d = lambda n: json.load(open("%s/%s.json" % (sys.argv[1], n)))
g, r, t, tr = d("fb_gaudi3"), d("rf_gaudi3"), d("fb_tpu_v6e"), d("rf_tpu_v6e")
f = g["diagnostics"]["tensor_achievable_fraction"]
ok = (0 < f < 1 and abs(g["diagnostics"]["compute_time_s"] * f / r["diagnostics"]["compute_time_s"] - 1) < 1e-9
      and g["diagnostics"]["tensor_achievable_source"] == "hardware"
      and g["diagnostics"]["fallback"].endswith("achievable-rate roofline")
      and "tensor_achievable_fraction" not in r["diagnostics"]
      and t["latency_s"] == tr["latency_s"] and t["diagnostics"]["fallback"].endswith(": roofline")
      and "tensor_achievable_fraction" not in t["diagnostics"])
sys.exit(0 if ok else 1)
PY
report $? "GEMM on gaudi3: the fallback at the entry's achievable fraction (1/f slower); tpu_v6e: the plain roofline" \
    "gaudi3 $(latency "$T/fb_gaudi3.json") roofline $(latency "$T/rf_gaudi3.json")"
# tools/gemm_small_m_study.py: the line t = a + b * k through the few-row rows of
# the hole shapes, and per shape the m on it and the m * n * k either side.
HDR='hardware,dtype,batch,m,n,k,group,measured_us'
{
    echo "$HDR"
    for m in 2 3; do
        echo "h,bf16,1,$m,32,2048,h|s:g,10.192"; echo "h,bf16,1,$m,32,3584,h|s:g,16.336"; echo "h,bf16,1,$m,64,1536,h|s:g,8.144"
    done
    echo "h,bf16,1,2,64,5120,h|s:g,22.48"; echo "h,bf16,1,8,64,5120,h|s:g,4.5"; echo "h,bf16,1,1,64,5120,h|s:g,3.0"
    echo "h,fp16,1,2,64,5120,h|s:g,4.5"
} > "$T/sms.csv"
run python3 tools/gemm_small_m_study.py "$T/sms.csv" --hardware h
why=""
[ "$RC" -eq 0 ] || why="exit $RC: $(first_err)"
[ -z "$why" ] && ! grep -q '^h bf16: t = 2.00 us + 4.000 ns \* k over 6 rows' "$T/out" && why="expected the line 2 us + 4 ns * k over 6 rows"
[ -z "$why" ] && ! grep -q 'n=64    k=5120   on m=2  max mnk on 655360  min mnk off 2621440' "$T/out" && why="n = 64, k = 5120: m = 2 on, m = 8 off"
[ -z "$why" ] && ! grep -q '^rows on the line: 7 of 8 few-row rows' "$T/out" && why="expected 7 of 8 rows on the line (m = 1 and fp16 left out)"
[ -z "$why" ]
report $? "gemm_small_m_study.py: the unsplit line and the m * n * k either side of it" "$why"
run python3 tools/gemm_small_m_study.py "$T/sms.csv" --hardware nope
[ "$RC" -ne 0 ] && [ ! -s "$T/out" ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q 'no few-row rows' "$T/err"
report $? "gemm_small_m_study.py without rows of the hardware: one line, nonzero exit" "$(first_err)"
# The A10 entry's achievable DRAM fraction (utilization.memory.hbm, from a
# GA102 read-stream measurement) is read: the built-in shows it, and a
# DRAM-bound add streams longer on it than on the same entry without it
# (the DRAM time goes as 1 / utilization).
"$BIN" hardware show a10 > "$T/a10.yaml"
sed '/^utilization:/,/^  memory:/d' "$T/a10.yaml" > "$T/a10_nou.yaml"
A10ADD='{"kind":"elementwise","inputs":[[134217728],[134217728]],"op":"add","dtype":"bf16"}'
echo "$A10ADD" | "$BIN" predict --hardware a10 --clock-mhz 900 --op - --model extended_roofline > "$T/a10_u.json"
echo "$A10ADD" | "$BIN" predict --hardware "$T/a10_nou.yaml" --clock-mhz 900 --op - --model extended_roofline > "$T/a10_nou.json"
dram() { sed -n 's/.*"dram_time_s": *\([-+0-9.eE]*\).*/\1/p' "$1" | head -n 1; }
grep -q 'hbm: 0\.9' "$T/a10.yaml" && ! grep -q '^utilization:' "$T/a10_nou.yaml" &&
    awk -v a="$(dram "$T/a10_u.json")" -v b="$(dram "$T/a10_nou.json")" 'BEGIN { exit !(b > 0 && a > b && a < b * 1.1) }'
report $? "a10: the entry's achievable DRAM fraction is read and lengthens a DRAM-bound add" "with $(dram "$T/a10_u.json") without $(dram "$T/a10_nou.json")"

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
