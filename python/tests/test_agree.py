"""Python and C agree: 10,000 random ops spanning every kind, each predicted
by every model from Python (the op rebuilt from its Python fields) and by the
CLI's --batch (the C library alone), field by field; 8 Python threads
predicting at once give what one thread gives; predict_many equals
one-at-a-time predictions for every kind."""
import json
import random
import subprocess
import threading

import pytest

import opmodel
from opmodel import LocalOp

from conftest import opmodel_bin

HARDWARE = ("h100_sxm", "a100_80gb_sxm", "mi300x", "t4")
DTYPES = ("fp32", "bf16", "fp16")


def _pick(r, *xs):
    return xs[r.randrange(len(xs))]


def random_short(r, kind):
    """A random short form of kind (most valid, some not: both sides must then fail)."""
    dt = _pick(r, *DTYPES)
    s = lambda lo, hi: r.randint(lo, hi)  # noqa: E731
    d = {"kind": kind, "dtype": dt}
    if kind == "gemm":
        d.update(m=s(1, 8192), n=s(1, 8192), k=s(1, 8192), transpose_b=r.random() < 0.5, bias=r.random() < 0.3)
        d["dtype"] = _pick(r, "fp32", "bf16", "fp16", "fp8_e4m3", "int8", "tf32")
    elif kind == "batched_gemm":
        d.update(batch=s(1, 64), m=s(1, 2048), n=s(1, 2048), k=s(1, 2048))
    elif kind == "grouped_gemm":
        d.update(groups=s(1, 16), m=s(1, 4096), n=s(16, 4096), k=s(16, 4096))
    elif kind.startswith("attention"):
        h = _pick(r, 8, 16, 32, 64)
        d.update(batch=s(1, 8), seq_kv=s(1, 8192), heads=h, kv_heads=_pick(r, 1, 2, 4, 8), head_dim=_pick(r, 64, 128),
                 causal=r.random() < 0.5)
        d["seq_q"] = s(1, 4) if kind == "attention_decode" else s(1, 4096)
    elif kind == "conv":
        n, c, hw_, co, kk = s(1, 16), s(1, 256), s(4, 64), s(1, 256), _pick(r, 1, 3, 5)
        d.update(input=[n, c, hw_, hw_], weight=[co, c, kk, kk], stride=_pick(r, 1, 2), padding=s(0, 2))
    elif kind in ("softmax", "layernorm", "rmsnorm", "copy"):
        d["shape"] = [s(1, 8192), s(1, 16384)]
    elif kind in ("batchnorm", "instancenorm"):
        d["shape"] = [s(1, 32), s(1, 256), s(1, 64), s(1, 64)]
    elif kind == "groupnorm":
        g = _pick(r, 1, 2, 4, 8, 32)
        d.update(shape=[s(1, 32), g * s(1, 16), s(1, 64), s(1, 64)], num_groups=g)
    elif kind == "elementwise":
        d.update(shape=[s(1, 4096), s(1, 8192)], op=_pick(r, "add", "mul", "exp", "gelu", "silu"))
    elif kind == "reduction":
        d.update(shape=[s(1, 4096), s(1, 8192)], op=_pick(r, "sum", "mean", "max", "argmax"), dim=_pick(r, 0, 1))
    elif kind == "embedding":
        d.update(tokens=s(1, 65536), vocab=s(1, 256000), dim=s(1, 8192))
    elif kind == "cross_entropy":
        d.update(tokens=s(1, 16384), vocab=s(2, 256000))
    elif kind == "rope":
        d.update(batch=s(1, 8), seq=s(1, 8192), heads=32, kv_heads=_pick(r, 8, 32), head_dim=_pick(r, 64, 128))
    elif kind == "causal_conv1d":
        d.update(batch=s(1, 8), dim=s(1, 8192), seqlen=s(1, 8192), width=s(2, 4), bias=r.random() < 0.5)
    elif kind == "mamba_ssd":
        d.update(batch=s(1, 8), seqlen=s(1, 8192), heads=_pick(r, 8, 16, 32), head_dim=64, state_dim=_pick(r, 64, 128),
                 groups=_pick(r, 1, 2, 4, 8))
    elif kind == "moe_dispatch":
        d.update(tokens=s(1, 16384), hidden=s(1, 8192), top_k=s(1, 8), experts=s(8, 256))
    elif kind == "moe_combine":
        d.update(tokens=s(1, 16384), hidden=s(1, 8192), top_k=s(1, 8))
    elif kind == "fused_moe":
        d.update(tokens=s(1, 4096), hidden=s(64, 8192), intermediate=s(64, 8192), experts=s(8, 128), top_k=s(1, 8))
    else:
        raise AssertionError(f"no generator for {kind}")
    if r.random() < 0.25:
        d["phase"] = "train_bwd"
    return d


def random_ops(n, seed=19):
    r = random.Random(seed)
    kinds = [k.value for k in opmodel.OpKind]
    lines = [json.dumps(random_short(r, kinds[i % len(kinds)])) for i in range(n)]
    return lines


def cli_batch(lines, hardware, model):
    out = subprocess.run([opmodel_bin(), "predict", "--hardware", hardware, "--model", model, "--batch", "-"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    res = [json.loads(x) for x in out.stdout.splitlines()]
    assert len(res) == len(lines)
    return res


def same(py, c):
    """The Python profile's fields against the CLI's JSON of the same op."""
    assert py.latency_s == pytest.approx(c["latency_s"], rel=1e-10, abs=1e-300)
    assert py.energy_j == pytest.approx(c["energy_j"], rel=1e-10, abs=1e-300)
    assert py.average_power_w == pytest.approx(c["average_power_w"], rel=1e-10, abs=1e-300)
    assert py.arithmetic_intensity == pytest.approx(c["arithmetic_intensity"], rel=1e-10, abs=1e-300)
    assert py.flops == c["flops"]
    assert py.engine.value == c["engine"] and py.bound.value == c["bound"] and py.model == c["model"]
    assert py.name == c["name"] and py.kind.value == c["kind"] and py.phase.value == c["phase"]
    fp = py.footprint
    assert [fp.input_bytes, fp.weight_bytes, fp.output_bytes, fp.workspace_bytes] == [
        c["footprint"][k] for k in ("input_bytes", "weight_bytes", "output_bytes", "workspace_bytes")]
    levels = py.memory_access.levels
    assert {k: list(v) for k, v in levels.items()} == {k: [v["read_bytes"], v["write_bytes"]]
                                                       for k, v in c["memory_access"].items()}
    assert py.memory_access.hbm_read_bytes == c["memory_access"]["hbm"]["read_bytes"]
    eb = py.energy_breakdown
    assert eb.compute_j == pytest.approx(c["energy_breakdown"]["compute_j"], rel=1e-10, abs=1e-300)
    assert eb.static_j == pytest.approx(c["energy_breakdown"]["static_j"], rel=1e-10, abs=1e-300)
    for k, v in py.diagnostics.items():
        cv = c["diagnostics"][k]
        assert (v == cv) if isinstance(v, str) else v == pytest.approx(cv, rel=1e-10, abs=1e-300), k


N_OPS = 10000


def test_python_and_c_agree_on_random_ops_of_every_kind_and_model():
    lines = random_ops(N_OPS)
    hws = {h: opmodel.load_hardware(h) for h in HARDWARE}
    by_hw = {h: [i for i in range(N_OPS) if i % len(HARDWARE) == j] for j, h in enumerate(HARDWARE)}
    ok = {m: 0 for m in opmodel.model_names()}
    kinds_ok = set()
    for h, idx in by_hw.items():
        sub = [lines[i] for i in idx]
        parsed = []
        for line in sub:
            try:
                op = opmodel.parse_op(line)
                # Rebuilt from its Python fields, so the Python -> C path is what is tested.
                parsed.append(LocalOp(op.name, op.kind, op.phase, op.tensors, dict(op.attrs)))
            except opmodel.OpmodelError as e:
                parsed.append(e)
        for model in opmodel.model_names():
            for op, c in zip(parsed, cli_batch(sub, h, model)):
                if isinstance(op, Exception):
                    assert "error" in c
                    continue
                try:
                    p = opmodel.predict(op, hws[h], model)
                except opmodel.OpmodelError as e:
                    assert "error" in c, (str(e), c)
                    assert c["error"].endswith(str(e)), (c["error"], str(e))
                    continue
                assert "error" not in c, (c, op)
                same(p, c)
                ok[model] += 1
                kinds_ok.add(op.kind)
    assert kinds_ok == set(opmodel.OpKind)
    for m, n in ok.items():
        assert n > 0.9 * N_OPS, (m, n)


def test_eight_threads_equal_one():
    lines = random_ops(800, seed=7)
    ops = []
    for line in lines:
        try:
            ops.append(opmodel.parse_op(line))
        except opmodel.OpmodelError:
            pass
    hw = opmodel.load_hardware("h100_sxm")

    def run(out):
        res = []
        for model in opmodel.model_names():
            for op in ops:
                try:
                    p = opmodel.predict(op, hw, model)
                    res.append((p.latency_s, p.flops, p.energy_j, p.bound, tuple(p.diagnostics.items())))
                except opmodel.OpmodelError as e:
                    res.append(str(e))
        out.append(res)

    one = []
    run(one)
    outs = [[] for _ in range(8)]
    threads = [threading.Thread(target=run, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in outs:
        assert o[0] == one[0]
