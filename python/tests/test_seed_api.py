"""The original opmodel package's Python API (second seed) runs verbatim,
its file forms load, every C kind and dtype is reachable, errors carry the C
message."""
import os

import pytest

import opmodel
from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline import EffectiveRooflineModel
from opmodel.models.extended_roofline import ExtendedRooflineModel
from opmodel.models.roofline import RooflineModel

from conftest import ROOT


def seed_op():
    return LocalOp(
        name="gemm",
        kind=OpKind.GEMM,
        phase=Phase.TRAIN_FWD,
        tensors=(
            TensorSpec(TensorRole.INPUT, (4096, 8192), DType.BF16),
            TensorSpec(TensorRole.WEIGHT, (8192, 32768), DType.BF16),
            TensorSpec(TensorRole.OUTPUT, (4096, 32768), DType.BF16),
        ),
    )


def test_seed_snippet_verbatim():
    hardware = load_hardware(os.path.join(ROOT, "configs/hardware/gpu_generic.yaml"))
    model = RooflineModel()
    op = seed_op()
    profile = model.predict(op, hardware)
    print(profile.latency_s, profile.energy_j)
    assert profile.flops == 2 * 4096 * 8192 * 32768
    # 2.2 TFLOP at the A100's 312 TFLOP/s dense bf16 peak.
    assert profile.latency_s == pytest.approx(2 * 4096 * 8192 * 32768 / 312e12)
    assert profile.energy_j > 0


def test_profile_fields():
    p = ExtendedRooflineModel().predict(seed_op(), load_hardware("h100_sxm"))
    for f in ("latency_s", "energy_j", "flops", "engine", "footprint", "memory_access", "energy_breakdown",
              "implementation", "diagnostics", "bound", "arithmetic_intensity"):
        assert hasattr(p, f), f
    fp = p.footprint
    assert (fp.input_bytes, fp.weight_bytes, fp.output_bytes, fp.workspace_bytes) == (
        4096 * 8192 * 2, 8192 * 32768 * 2, 4096 * 32768 * 2, 0)
    ma = p.memory_access
    assert ma.hbm_read_bytes > 0 and ma.hbm_write_bytes > 0
    assert ma.sram_read_bytes is None or ma.sram_read_bytes >= 0
    eb = p.energy_breakdown
    assert eb.compute_j > 0 and eb.static_j >= 0
    assert p.engine == opmodel.Engine.TENSOR and p.engine == "tensor"
    assert p.implementation == "extended_roofline"
    assert isinstance(p.diagnostics, dict) and "kernel" in p.diagnostics
    d = p.to_dict()
    assert d["latency_s"] == pytest.approx(p.latency_s, rel=1e-11)
    assert EffectiveRooflineModel().predict(seed_op(), "h100_sxm").model == "effective_roofline"


def test_every_kind_and_dtype_reachable():
    import subprocess
    from conftest import opmodel_bin
    kinds = [line.split()[0] for line in subprocess.run([opmodel_bin(), "ops"], capture_output=True, text=True,
                                                           check=True).stdout.splitlines() if line.strip()
             and not line.startswith(" ")]
    assert set(kinds) <= {k.value for k in OpKind}
    assert len(OpKind) == 24
    assert {d.value for d in DType} >= {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8",
                                         "int4", "fp4_e2m1", "int32", "int64", "bool"}
    assert DType.FP8 is DType.FP8_E4M3
    assert set(opmodel.model_names()) == {"roofline", "extended_roofline", "effective_roofline"}
    assert "mi300x" in opmodel.builtin_hardware()


def test_errors_are_value_errors_with_the_c_message():
    bad = LocalOp("g", OpKind.GEMM, Phase.INFERENCE, (
        TensorSpec(TensorRole.INPUT, (4, 8), DType.BF16),
        TensorSpec(TensorRole.WEIGHT, (9, 16), DType.BF16),
        TensorSpec(TensorRole.OUTPUT, (4, 16), DType.BF16)))
    with pytest.raises(opmodel.OpmodelError) as e:
        RooflineModel().predict(bad, load_hardware("h100_sxm"))
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith("tensors[1].shape: ")
    with pytest.raises(ValueError, match="no model named 'nope'"):
        opmodel.predict(seed_op(), "h100_sxm", model="nope")
    with pytest.raises(opmodel.OpmodelError, match="h100_sxx"):
        load_hardware("h100_sxx")
    with pytest.raises(opmodel.OpmodelError, match=r"attrs.transpose_q: unknown attribute for kind gemm"):
        LocalOp("g", "gemm", "inference", seed_op().tensors, {"transpose_q": True}).validate()


def test_seed_file_forms_load():
    hints = opmodel.load_op(os.path.join(ROOT, "examples/gemm_kernel_hints.yaml"))
    assert hints.attrs["warp_tile_k"] == 32 and hints.attrs["beta_zero"] is True
    assert hints.attrs["threads_per_cta"] == 128 and hints.attrs["mma_k"] == 16
    for m in opmodel.model_names():
        assert opmodel.predict(hints, "a10", m).flops == 2 * 2048 * 4096 * 4096
    with pytest.raises(opmodel.OpmodelError) as e:
        opmodel.load_op(os.path.join(ROOT, "tests/data/bad/op_gemm_beta_zero_typo.yaml"))
    msg = str(e.value)
    assert "\n" not in msg and "attrs.beta_zero: expected a boolean (true or false), got 'truLooke'" in msg
    attn = opmodel.load_op(os.path.join(ROOT, "examples/attention_prefill_bhsd.yaml"))
    c = attn.counts()
    # [B, H, S, D] read as such: causal 2048 x 2048, 32 heads of 128.
    assert c.matrix_flops == 2 * 32 * (2048 * 2049 // 2) * 256
    assert 34.3e9 < c.matrix_flops < 34.5e9
    short = opmodel.short_op("attention_prefill", "bf16", batch=1, seq_q=2048, seq_kv=2048, heads=32, head_dim=128,
                             causal=True)
    assert short.counts() == c
    with pytest.raises(opmodel.OpmodelError, match=r"tensors\[1\].shape: expected \[B, S, H, D\] or \[B, H, S, D\]"):
        opmodel.load_op(os.path.join(ROOT, "tests/data/bad/op_attention_bhsd_mismatch.yaml"))
    # The same form built in Python.
    t = [TensorSpec(TensorRole.INPUT, (1, 32, 2048, 128), DType.BF16, lay) for lay in "qkv"]
    t.append(TensorSpec(TensorRole.OUTPUT, (1, 32, 2048, 128), DType.BF16))
    op = LocalOp("attn", OpKind.ATTENTION_PREFILL, Phase.PREFILL, tuple(t),
                 dict(batch=1, seq_q=2048, seq_kv=2048, heads=32, head_dim=128, causal=True, flash_attention=True))
    assert op.counts() == c
    for name in ("gpu_generic", "tpu_generic", "a10"):
        assert load_hardware(os.path.join(ROOT, "configs/hardware", name + ".yaml")).name == name


def test_hardware_object():
    hw = load_hardware("h100_sxm")
    assert hw.peak_flops("tensor", "bf16") > 9e14
    slow = hw.with_clock(hw.clock_hz / 2)
    assert slow.peak_flops("tensor", DType.BF16) < hw.peak_flops("tensor", DType.BF16)
    again = opmodel.Hardware.from_yaml(hw.to_yaml())
    assert again.name == "h100_sxm"
    assert opmodel.predict(seed_op(), again).latency_s == opmodel.predict(seed_op(), hw).latency_s
