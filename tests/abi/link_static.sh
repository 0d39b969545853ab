#!/usr/bin/env bash
# Links tests/abi/embed.c against a libopmodel.a with the compiler CC (clang
# by default; the archive is normally built by GCC, so this proves it holds
# machine code and not only GCC LTO bitcode), then runs it.
# usage: link_static.sh LIBOPMODEL_A INCLUDE_DIR... (CC=clang; EMBED_FLAGS, such
# as -fsanitize=address,undefined for a sanitized archive, go to the compiler)
set -euo pipefail
archive=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-clang}
incs=()
for d in "$@"; do incs+=(-I "$d"); done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046,SC2086
"$cc" ${EMBED_FLAGS:-} -std=c17 -Wall -Wextra -Wpedantic -Werror -fno-lto "${incs[@]}" "$here/embed.c" "$archive" \
  $(pkg-config --libs yaml-0.1 yajl zlib) -lm -o "$tmp/embed"
"$tmp/embed"
