#!/usr/bin/env python3
"""The "model op performance without a trace" worked example, end to end,
on opmodel: every linear of a Llama-3-70B decoder layer as arithmetic
intensity, SDPA forward and backward across sequence lengths, and a
per-token roofline rollup (ms per token for prefill and decode, bf16, MI300X
at 708 TFLOP/s and 5300 GB/s: examples/hardware/mi300x_708tf.yaml).

FLOPs, bytes and roofline times all come from libopmodel (perf_model's
flops_func / bytes_func, and the roofline model on the hardware file).
Prints tables; with matplotlib installed, also saves the plots (--plots DIR,
default the current folder).

    OPMODEL_LIB=build/libopmodel.so PYTHONPATH=python python3 examples/perf_model_without_trace.py
"""
import argparse
import os
import sys

import opmodel
from opmodel.perf_model import GEMM, SDPA

HERE = os.path.dirname(os.path.abspath(__file__))
HARDWARE = os.path.join(HERE, "hardware", "mi300x_708tf.yaml")

# Llama-3-70B
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, LAYERS, VOCAB = 8192, 64, 8, 128, 28672, 80, 128256
# The decoder layer's linears as (name, N, K): y[M, N] = x[M, K] · W[K, N].
LINEARS = [("q_proj", HEADS * HEAD_DIM, HIDDEN), ("k_proj", KV_HEADS * HEAD_DIM, HIDDEN),
           ("v_proj", KV_HEADS * HEAD_DIM, HIDDEN), ("o_proj", HIDDEN, HEADS * HEAD_DIM),
           ("gate_proj", FFN, HIDDEN), ("up_proj", FFN, HIDDEN), ("down_proj", HIDDEN, FFN)]
BPE = 2  # bf16


def hardware():
    return opmodel.load_hardware(HARDWARE)


def gemm_us(hw, m, n, k):
    """Roofline time of one bf16 GEMM on hw, from the C model."""
    return opmodel.predict(opmodel.short_op("gemm", "bf16", m=m, n=n, k=k), hw).latency_s * 1e6


def sdpa_us(hw, seq_q, seq_kv, causal):
    op = opmodel.short_op("attention", "bf16", batch=1, seq_q=seq_q, seq_kv=seq_kv, heads=HEADS,
                          kv_heads=KV_HEADS, head_dim=HEAD_DIM, causal=causal)
    return opmodel.predict(op, hw).latency_s * 1e6


def linears_table(tokens=(1, 16, 128, 512, 2048, 8192)):
    """(name, M, FLOPs, bytes, arithmetic intensity) for every linear."""
    rows = []
    for name, n, k in LINEARS:
        for m in tokens:
            f = GEMM.flops_func(m, n, k, bias=False)
            b = GEMM.bytes_func(m, n, k, False, BPE, BPE, BPE, BPE)
            rows.append((name, m, f, b, f / b))
    return rows


def sdpa_table(seqs=(512, 1024, 2048, 4096, 8192, 16384)):
    """(S, fwd FLOPs, fwd bytes, bwd FLOPs, fwd AI) for causal GQA SDPA."""
    rows = []
    for s in seqs:
        args = (1, s, HEADS, s, KV_HEADS, HEAD_DIM, HEAD_DIM, True)
        f, b = SDPA.flops_func(*args), SDPA.bytes_func(*args, BPE)
        rows.append((s, f, b, SDPA.flops_bwd_func(*args, flash_impl=True), f / b))
    return rows


def rollup(hw=None, context=2048, prefill_tokens=2048):
    """Per-token roofline: decode ms per token at `context`, prefill ms per
    `prefill_tokens`-token forward (GEMMs and SDPA only, LAYERS layers +
    lm_head)."""
    hw = hw or hardware()
    out = {}
    for phase, m, sq in (("decode", 1, 1), ("prefill", prefill_tokens, prefill_tokens)):
        layer = sum(gemm_us(hw, m, n, k) for _, n, k in LINEARS)
        attn = sdpa_us(hw, sq, context if phase == "decode" else prefill_tokens, phase == "prefill")
        head = gemm_us(hw, m, VOCAB, HIDDEN)
        out[phase] = {"linears_us": layer, "sdpa_us": attn, "lm_head_us": head,
                      "total_ms": (LAYERS * (layer + attn) + head) / 1e3}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plots", default=".", help="folder for the PNG plots (needs matplotlib)")
    args = ap.parse_args(argv)
    hw = hardware()
    knee = hw.peak_flops("tensor", "bf16") / (5300e9)
    print(f"hardware {hw.name}: knee {knee:.1f} FLOP/byte\n")
    print(f"{'linear':10} {'M':>6} {'GFLOP':>10} {'MB':>9} {'FLOP/B':>8} {'roofline us':>12}")
    lin = linears_table()
    for name, m, f, b, ai in lin:
        print(f"{name:10} {m:6d} {f / 1e9:10.2f} {b / 1e6:9.2f} {ai:8.1f} {gemm_us(hw, m, *dict((x[0], x[1:]) for x in LINEARS)[name]):12.1f}")
    print(f"\n{'SDPA S':>7} {'fwd GFLOP':>10} {'fwd MB':>8} {'bwd GFLOP':>10} {'FLOP/B':>8} {'fwd us':>9}")
    sd = sdpa_table()
    for s, f, b, fb, ai in sd:
        print(f"{s:7d} {f / 1e9:10.1f} {b / 1e6:8.1f} {fb / 1e9:10.1f} {ai:8.1f} {sdpa_us(hw, s, s, True):9.1f}")
    r = rollup(hw)
    print("\nper-token roofline (GEMMs + SDPA, 80 layers + lm_head)")
    for phase in ("prefill", "decode"):
        x = r[phase]
        what = "per 2048-token forward" if phase == "prefill" else "per token at context 2048"
        print(f"  {phase:8} {x['total_ms']:9.2f} ms {what}  (layer linears {x['linears_us']:.1f} us, "
              f"SDPA {x['sdpa_us']:.1f} us, lm_head {x['lm_head_us']:.1f} us)")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib not installed: no plots)")
        return 0
    os.makedirs(args.plots, exist_ok=True)
    fig, ax = plt.subplots()
    for name, _, _ in LINEARS:
        pts = [(m, ai) for n2, m, _, _, ai in lin if n2 == name]
        ax.plot(*zip(*pts), marker="o", label=name)
    ax.axhline(knee, color="k", ls="--", label="roofline knee")
    ax.set(xscale="log", yscale="log", xlabel="tokens M", ylabel="FLOP / byte", title="Llama-3-70B linears")
    ax.legend()
    fig.savefig(os.path.join(args.plots, "linears_ai.png"), dpi=120)
    fig, ax = plt.subplots()
    ax.plot([s for s, *_ in sd], [f / 1e9 for _, f, *_ in sd], marker="o", label="forward")
    ax.plot([s for s, *_ in sd], [fb / 1e9 for *_, fb, _ in sd], marker="o", label="backward")
    ax.set(xscale="log", yscale="log", xlabel="sequence length", ylabel="GFLOP", title="SDPA (causal, GQA 64/8)")
    ax.legend()
    fig.savefig(os.path.join(args.plots, "sdpa_flops.png"), dpi=120)
    print(f"\nplots saved in {args.plots}/ (linears_ai.png, sdpa_flops.png)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
