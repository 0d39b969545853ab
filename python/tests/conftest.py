"""Runs against the source tree's package; the library comes from
OPMODEL_LIB (meson test sets it to the built libopmodel.so), else
build/libopmodel.so of this checkout when there is one."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
if not os.environ.get("OPMODEL_LIB") and os.path.exists(os.path.join(ROOT, "build", "libopmodel.so")):
    os.environ["OPMODEL_LIB"] = os.path.join(ROOT, "build", "libopmodel.so")


def opmodel_bin():
    """The CLI built next to the library (OPMODEL_BIN when set)."""
    b = os.environ.get("OPMODEL_BIN")
    if b:
        return b
    lib = os.environ.get("OPMODEL_LIB", "")
    return os.path.join(os.path.dirname(lib), "src", "cli", "opmodel")
