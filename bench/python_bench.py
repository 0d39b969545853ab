#!/usr/bin/env python3
"""Python binding speed (bench/README.md): per-call overhead of
opmodel.predict over the C prediction it wraps, and predict_many throughput
on roofline GEMMs.

    OPMODEL_LIB=build/libopmodel.so PYTHONPATH=python /usr/bin/python3 bench/python_bench.py

The overhead is the time of one Python predict() on an op already built
(ctypes call, profile object) minus the time C spends on the same prediction,
measured as predict_many's per-row time over rows equal to that op.
"""
import sys
import time

import numpy as np

import opmodel
import opmodel.models.roofline


def loop(fn, n):
    """n calls, results dropped (as a sweep that keeps a few fields would)."""
    def run():
        for _ in range(n):
            fn()
    return run


def best(fn, reps=5):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    hw = opmodel.load_hardware(sys.argv[1] if len(sys.argv) > 1 else "h100_sxm")
    op = opmodel.short_op("gemm", "bf16", m=4096, n=8192, k=8192).validate()
    n = 200_000
    opmodel.predict(op, hw)
    py = best(loop(lambda: opmodel.predict(op, hw), n)) / n
    model = opmodel.models.roofline.RooflineModel()
    py_cls = best(loop(lambda: model.predict(op, hw), n)) / n
    same = np.tile(np.array([[4096, 8192, 8192]], dtype=np.int64), (n, 1))
    c_one = best(lambda: opmodel.predict_many("gemm", same, "bf16", hardware=hw)) / n
    print(f"predict():               {py * 1e6:.2f} us/call; RooflineModel().predict(): {py_cls * 1e6:.2f} us/call")
    print(f"C prediction alone:      {c_one * 1e6:.3f} us (predict_many per row, same op)")
    print(f"Python overhead/call:    {(py - c_one) * 1e6:.2f} us (target <= 5)")
    rng = np.random.default_rng(0)
    rows = rng.integers(1, 16385, size=(2_000_000, 3), dtype=np.int64)
    for model_name in ("roofline", "extended_roofline", "effective_roofline"):
        t = best(lambda: opmodel.predict_many("gemm", rows, "bf16", hardware=hw, model=model_name), reps=3)
        print(f"predict_many {model_name:19} {len(rows) / t / 1e6:.2f} M GEMM/s ({len(rows)} random m, n, k)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
