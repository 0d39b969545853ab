#!/bin/sh
# python: the Python package's pytest suite (python/tests) against the built
# libopmodel.so, with Debian's interpreter (/usr/bin/python3, where
# python3-pytest and python3-numpy install; OPMODEL_PYTHON overrides).
# Skipped (exit 77) when that interpreter lacks pytest or numpy, and in a
# sanitizer build: loading an ASan/UBSan library into an uninstrumented
# Python needs the sanitizer runtime preloaded and reports the interpreter's
# own leaks; the C side of the bindings (opm_predict_many) runs under the
# sanitizers in the `batch` unit test instead.
PY=${OPMODEL_PYTHON:-/usr/bin/python3}
if [ -n "$OPM_SANITIZE" ] && [ "$OPM_SANITIZE" != none ]; then
  echo "skipped: sanitizer build ($OPM_SANITIZE)"; exit 77
fi
[ -x "$PY" ] || { echo "skipped: no $PY"; exit 77; }
"$PY" -c "import pytest, numpy" 2>/dev/null ||
  { echo "skipped: $PY lacks pytest or numpy (apt-get install python3-pytest python3-numpy)"; exit 77; }
exec "$PY" -m pytest -q -p no:cacheprovider "$OPM_SOURCE_DIR/python/tests"
