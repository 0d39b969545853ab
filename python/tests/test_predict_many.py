"""predict_many: one C call per table, equal to one-at-a-time predictions
for every kind's default columns and for named keys; errors by row or NaN;
many threads at once."""
import threading

import pytest

import opmodel

np = pytest.importorskip("numpy")

# One row per kind in its default columns (opmodel.default_keys).
ROWS = {
    "gemm": [(1, 8192, 8192), (2048, 1024, 8192)],
    "batched_gemm": [(8, 512, 512, 64)],
    "grouped_gemm": [(8, 4096, 2048, 1408)],
    "attention": [(2, 512, 512, 16, 4, 64)],
    "attention_prefill": [(1, 2048, 2048, 32, 8, 128)],
    "attention_decode": [(16, 1, 4096, 32, 8, 128)],
    "conv": [(8, 64, 56, 56, 128, 64, 3, 3)],
    "softmax": [(4096, 32000)], "layernorm": [(4096, 8192)], "rmsnorm": [(4096, 8192)],
    "batchnorm": [(8, 64, 56, 56)], "groupnorm": [(8, 64, 56, 56)], "instancenorm": [(8, 64, 56, 56)],
    "elementwise": [(4096, 8192)], "reduction": [(4096, 8192)], "copy": [(4096, 8192)],
    "cross_entropy": [(4096, 128256)], "embedding": [(4096, 128256, 8192)], "rope": [(2, 4096, 32, 8, 128)],
    "causal_conv1d": [(2, 8192, 4096, 4)], "mamba_ssd": [(2, 4096, 32, 64, 128, 1)],
    "moe_dispatch": [(4096, 7168, 8, 256)], "moe_combine": [(4096, 7168, 8)],
    "fused_moe": [(1024, 4096, 1408, 64, 6)],
}


# Attributes a kind's short form needs besides its columns.
ATTRS = {"groupnorm": {"num_groups": 8}}


def short_of(kind, row):
    keys = opmodel.default_keys(kind)
    if keys == ("shape",):
        return {"shape": list(row)}
    d = {}
    for k, v in zip(keys, row):
        if "[" in k:
            base, i = k[:-1].split("[")
            d.setdefault(base, []).append(v)
        else:
            d[k] = v
    return d


def test_every_kind_equals_one_at_a_time():
    assert set(ROWS) == {k.value for k in opmodel.OpKind}
    hw = opmodel.load_hardware("h100_sxm")
    for model in opmodel.model_names():
        for kind, rows in ROWS.items():
            got = opmodel.predict_many(kind, np.array(rows), "bf16", hardware=hw, model=model,
                                       fields=opmodel.FIELDS, attrs=ATTRS.get(kind))
            assert got.shape == (len(rows), len(opmodel.FIELDS))
            for row, g in zip(rows, got):
                p = opmodel.predict(opmodel.short_op(kind, "bf16", **short_of(kind, row), **ATTRS.get(kind, {})), hw,
                                    model)
                want = [p.latency_s, p.flops, p.matrix_flops, p.vector_flops, p.memory_access.hbm_read_bytes,
                        p.memory_access.hbm_write_bytes, p.arithmetic_intensity, p.energy_j, p.compute_time_s,
                        p.overhead_s, list(opmodel.Bound).index(p.bound), list(opmodel.Engine).index(p.engine),
                        p.footprint.input_bytes, p.footprint.weight_bytes, p.footprint.output_bytes,
                        p.footprint.workspace_bytes]
                assert list(g) == [float(x) for x in want], (model, kind)


def test_sweep_and_options():
    m = np.arange(1, 4097)
    shapes = np.stack([m, np.full_like(m, 8192), np.full_like(m, 8192)], axis=1)
    lat = opmodel.predict_many("gemm", shapes, "bf16", hardware="h100_sxm")
    assert lat.shape == (4096,) and np.all(np.diff(lat) >= 0)
    p = opmodel.predict(opmodel.short_op("gemm", "bf16", m=100, n=8192, k=8192), "h100_sxm")
    assert lat[99] == p.latency_s
    # Named keys, a list given entry by entry, attrs on every row, a phase, tuples.
    a = opmodel.predict_many("attention_prefill", [(1024, 4096, 32, 128, 1)], "bf16", hardware="h100_sxm",
                             keys=("seq_q", "seq_kv", "heads", "head_dim", "batch"), attrs={"causal": True},
                             phase="train_bwd", fields="flops")
    want = opmodel.short_op("attention_prefill", "bf16", phase="train_bwd", batch=1, seq_q=1024, seq_kv=4096,
                            heads=32, head_dim=128, causal=True).counts().flops
    assert a[0, 0] == want
    r = opmodel.predict_many("rmsnorm", [(8192, 16)], hardware="h100_sxm", keys=("shape[1]", "shape[0]"),
                             fields=("hbm_read_bytes",))
    assert r[0, 0] == opmodel.predict(opmodel.short_op("rmsnorm", shape=[16, 8192]), "h100_sxm").memory_access.hbm_read_bytes


def test_errors():
    with pytest.raises(opmodel.OpmodelError, match=r"^row 1: m: expected"):
        opmodel.predict_many("gemm", [(16, 16, 16), (0, 16, 16)], hardware="h100_sxm")
    out = opmodel.predict_many("gemm", [(16, 16, 16), (0, 16, 16)], hardware="h100_sxm", errors="nan")
    assert out[0] > 0 and np.isnan(out[1])
    with pytest.raises(ValueError, match=r"keys\[2\]: 'kk': not a short-form key"):
        opmodel.predict_many("gemm", [(16, 16, 16)], hardware="h100_sxm", keys=("m", "n", "kk"))
    with pytest.raises(opmodel.OpmodelError, match="unknown field 'latency'"):
        opmodel.predict_many("gemm", [(16, 16, 16)], hardware="h100_sxm", fields=("latency",))
    with pytest.raises(opmodel.OpmodelError, match="4 columns, 3 keys"):
        opmodel.predict_many("gemm", [(1, 16, 16, 16)], hardware="h100_sxm")
    assert opmodel.predict_many("gemm", np.zeros((0, 3), dtype=np.int64), hardware="h100_sxm").shape == (0,)


def test_threads_share_hardware():
    hw = opmodel.load_hardware("a100_80gb_sxm")
    rng = np.random.default_rng(3)
    shapes = rng.integers(1, 8192, size=(20000, 3))
    one = opmodel.predict_many("gemm", shapes, hardware=hw, model="effective_roofline")
    outs = [None] * 8

    def run(i):
        outs[i] = opmodel.predict_many("gemm", shapes, hardware=hw, model="effective_roofline")

    ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for o in outs:
        assert np.array_equal(o, one)
