#!/bin/sh
# Start-up time of `opmodel predict` beside the exec floor of this machine:
# /bin/true and an empty statically linked C program (issue 22's start-up bar).
# usage: bench/startup.sh [build/src/cli/opmodel]   (needs perf)
set -eu
exe=${1:-build/src/cli/opmodel}
runs=${RUNS:-300}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'int main(void) { return 0; }\n' > "$tmp/empty.c"
${CC:-cc} -O2 -static -o "$tmp/empty_static" "$tmp/empty.c" 2>/dev/null || cp /bin/true "$tmp/empty_static"
clock() { perf stat -x, -e task-clock -r "$runs" "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.3f", $1 }'; }
linkage=$(if ldd "$exe" >/dev/null 2>&1; then echo dynamic; else echo static; fi)
printf '%-44s %8s ms CPU\n' "empty static program" "$(clock "$tmp/empty_static")"
printf '%-44s %8s ms CPU\n' "/bin/true" "$(clock /bin/true)"
printf '%-44s %8s ms CPU\n' "opmodel --version ($linkage)" "$(clock "$exe" --version)"
printf '%-44s %8s ms CPU\n' "opmodel predict gemm h100_sxm ($linkage)" \
  "$(clock "$exe" predict --hardware h100_sxm --op examples/gemm.yaml)"
