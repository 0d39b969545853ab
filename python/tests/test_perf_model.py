"""The first seed's snippets (TraceLens "perf model without a trace"), run
on opmodel.perf_model, give the documented numbers; the worked example's
roofline figures on the 708 TFLOP/s / 5300 GB/s MI300X file."""
import importlib.util
import os

import pytest

import opmodel
from opmodel import perf_model
from opmodel.perf_model import GEMM, SDPA

from conftest import ROOT


def test_gemm_snippet():
    M, N, K = 40960, 6144, 1536
    bpe = 2  # bytes per element (bf16)

    flops = GEMM.flops_func(M, N, K, bias=False)                 # 2 * M * N * K
    bytes_ = GEMM.bytes_func(M, N, K, False, bpe, bpe, bpe, bpe)  # read A + read B + write C
    arithmetic_intensity = flops / bytes_                         # FLOPs per byte

    assert flops == 2 * M * N * K
    assert bytes_ == (M * K + K * N + M * N) * 2
    assert arithmetic_intensity == pytest.approx(2 * M * N * K / ((M * K + K * N + M * N) * 2))
    assert GEMM.bytes_func(M, N, K, True, bpe, bpe, 4, 4) == (M * K + K * N) * 2 + N * 4 + M * N * 4
    assert GEMM.flops_bwd_func(M, N, K) == 2 * GEMM.flops_func(M, N, K)


def test_sdpa_snippet_equals_the_c_attention_counts():
    bpe = 2
    # B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal
    flops_fwd = SDPA.flops_func(1, 4096, 64, 4096, 8, 128, 128, True)
    bytes_fwd = SDPA.bytes_func(1, 4096, 64, 4096, 8, 128, 128, True, bpe)
    flops_bwd = SDPA.flops_bwd_func(1, 4096, 64, 4096, 8, 128, 128, True, flash_impl=True)

    keys = dict(batch=1, seq_q=4096, heads=64, seq_kv=4096, kv_heads=8, head_dim=128, causal=True)
    fwd = opmodel.short_op("attention", "bf16", **keys).counts()
    bwd = opmodel.short_op("attention", "bf16", phase="train_bwd", **keys).counts()
    assert flops_fwd == fwd.matrix_flops + fwd.vector_flops
    assert bytes_fwd == fwd.read_bytes + fwd.write_bytes
    assert flops_bwd == bwd.matrix_flops + bwd.vector_flops
    n = 4096 * 4097 // 2  # causal scores per head, diagonal included
    assert fwd.matrix_flops == 2 * 64 * n * 256
    assert bytes_fwd == (4096 * 64 * 128 * 2 + 2 * 4096 * 8 * 128) * 2
    assert SDPA.flops_bwd_func(1, 4096, 64, 4096, 8, 128, 128, True, flash_impl=False) < flops_bwd


def test_roofline_snippet_on_the_example_hardware():
    PEAK_TFLOPS_BF16 = 708.0   # MI300X matrix bf16
    HBM_BW_GBPS = 5300.0       # HBM3

    def roofline_time_us(flops, bytes_):
        compute_us = flops / (PEAK_TFLOPS_BF16 * 1e12) * 1e6
        bandwidth_us = bytes_ / (HBM_BW_GBPS * 1e9) * 1e6
        return max(compute_us, bandwidth_us)

    hw = opmodel.load_hardware(os.path.join(ROOT, "examples/hardware/mi300x_708tf.yaml"))
    for m in (1, 128, 2048):
        f, b = GEMM.flops_func(m, 8192, 8192), GEMM.bytes_func(m, 8192, 8192, False, 2, 2, 2, 2)
        c = opmodel.predict(opmodel.short_op("gemm", "bf16", m=m, n=8192, k=8192), hw).latency_s * 1e6
        assert c == pytest.approx(roofline_time_us(f, b), rel=1e-12)


def load_example():
    path = os.path.join(ROOT, "examples", "perf_model_without_trace.py")
    spec = importlib.util.spec_from_file_location("perf_model_without_trace", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_worked_example_numbers(tmp_path, capsys):
    ex = load_example()
    hw = ex.hardware()
    q = [round(ex.gemm_us(hw, m, 8192, 8192), 1) for m in (1, 128, 2048)]
    assert q == [25.3, 26.1, 388.2]
    r = ex.rollup(hw)
    assert round(r["decode"]["total_ms"], 2) == 26.36
    # 409.85 ms in the original (causal scores S²/2); the C library counts
    # the diagonal too (S(S+1)/2), 0.008 ms more over 80 layers.
    assert r["prefill"]["total_ms"] == pytest.approx(409.85, abs=0.01)
    assert ex.main(["--plots", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "per-token roofline" in out and "26.36 ms" in out


@pytest.mark.parametrize("cls,args", [
    (perf_model.CONV, ([8, 64, 56, 56], [128, 64, 3, 3])),
    (perf_model.Softmax, ([4096, 32000],)),
    (perf_model.CrossEntropy, (4096, 32000)),
    (perf_model.GroupedGemm, ([300, 0, 120, 92], 2048, 1408)),
    (perf_model.MambaSSD, (2, 4096, 32, 64, 128, 1)),
    (perf_model.FusedRoPE, (2, 4096, 32, 8, 128)),
    (perf_model.CausalConv1d, (2, 4096, 8192, 4)),
    (perf_model.Elementwise, ([4096, 8192],)),
    (perf_model.Reduction, ([4096, 8192],)),
])
def test_every_family_counts_through_c(cls, args):
    f, b = cls.flops_func(*args), cls.bytes_func(*args, 2)
    assert isinstance(f, int) and isinstance(b, int) and b > 0
    assert cls.bytes_func(*args, 4) >= b
    assert cls.flops_func.__doc__.startswith(cls.__name__ + ".flops_func(")
    if hasattr(cls, "flops_bwd_func"):
        assert cls.flops_bwd_func(*args) >= 0 and cls.bytes_bwd_func(*args, 2) > 0


def test_normalization_and_moe():
    N = perf_model.Normalization
    assert N.flops_func([4096, 8192], "rmsnorm") < N.flops_func([4096, 8192], "layernorm")
    assert N.bytes_func([4096, 8192], 2, "rmsnorm") > 2 * 4096 * 8192 * 2
    assert N.flops_bwd_func([4096, 8192], "layernorm") > 0
    with pytest.raises(opmodel.OpmodelError, match="norm: expected"):
        N.flops_func([4, 4], "fancynorm")
    M = perf_model.MoEComm
    assert M.bytes_func(4096, 7168, 8, 256, 2) > 4096 * 8 * 7168 * 2
    assert M.bytes_func(4096, 7168, 8, 256, 2, combine=True) > 0
