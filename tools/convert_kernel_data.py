#!/usr/bin/env python3
"""Convert the shared attention, decode, quantisation, Vidur memory-bound and NeuSight
softmax/layernorm measurements into contract section 4 general measurements (JSONL).

Reads (paths under --shared, default ../shared/data):
  measured/aiconfigurator/attention_prefill.csv   -> aic_attention_prefill.jsonl
  measured/aiconfigurator/attention_decode.csv    -> aic_attention_decode.jsonl
  measured/aiconfigurator/quantize_elementwise.csv -> aic_quantize.jsonl
  measured/vidur/memory_bound_ops.csv             -> vidur_memory_bound.jsonl
  measured/neusight/softmax.csv                   -> neusight_softmax.jsonl
  measured/neusight/layernorm.csv                 -> neusight_layernorm.jsonl
and copies each upstream LICENSE next to them as LICENSE_<source>.

One measurement per line, keys in this order:
  {"hardware": ..., "op": {short-form op}, "measured": {"latency_s": ...},
   "source": ..., "timing": "graph|kernel|events", "kernel": ...}
(`kernel` only where the source names one; no `clock_mhz`: no source locked the clocks).
Lines keep the order of the source CSV rows. Standard library only; the output is
byte-for-byte reproducible. Every mapping decision is explained in data/kernels/README.md.

Usage (from the repository root):
  python3 tools/convert_kernel_data.py --shared ../shared/data --out data/kernels
"""

import argparse
import csv
import json
import os
import shutil
import sys
from decimal import Decimal

# opmodel dtype names accepted in the op short forms (docs/contract.md section 1).
DTYPES = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int4",
          "fp4_e2m1"}

# aiconfigurator collectors use a paged KV cache with 64-token blocks (shared README).
AIC_PAGE_SIZE = 64

# NeuSight `Device` column -> opmodel built-in hardware name.
NEUSIGHT_DEVICES = {
    "NVIDIA A100-PCIE-40GB": "a100_40gb_pcie",
    "Tesla P100-PCIE-16GB": "p100_pcie_16gb",
    "Tesla P4": "p4",
    "Tesla T4": "t4",
    "Tesla V100-PCIE-32GB": "v100_pcie_32gb",
}

# The model configurations Vidur's profiler was run with: microsoft/vidur
# data/model_configs/<org>/<model>.yml (num_q_heads, num_kv_heads, embedding_dim,
# mlp_hidden_dim, vocab_size, max_position_embeddings, partial_rotary_factor). These are the
# values the profiled layers were built from; where they differ from the Hugging Face configs
# (Llama-2 and CodeLlama vocab 32768 instead of 32000 / 32016) the profiler's value is used.
VIDUR_MODELS = {
    #  model                        heads kv   embd   mlp    vocab   max_pos
    "Llama-2-7b-hf":             (32, 32, 4096, 11008, 32768, 4096),
    "Llama-2-70b-hf":            (64, 8, 8192, 28672, 32768, 4096),
    "CodeLlama-34b-Instruct-hf": (64, 8, 8192, 22016, 32768, 16384),
    "internlm-20b":              (40, 40, 5120, 13824, 103168, 4096),
    "Qwen-72B":                  (64, 64, 8192, 24576, 152064, 32768),
    "phi-2":                     (32, 32, 2560, 10240, 51200, 2048),
    "Meta-Llama-3-8B":           (32, 8, 4096, 14336, 128256, 4096),
    "Meta-Llama-3-70B":          (64, 8, 8192, 28672, 128256, 8192),
}

# Vidur's layers read an activation that the kernel just before them wrote (the GEMM output
# for rotary, SiLU-and-mul and the residual add; the embedding / add output for the norms), as
# in data/gemm_tc (l2_warm input for Vidur's GEMMs). The embedding gathers table rows and is
# left cold. Set to None to write the ops without an l2_warm attr.
VIDUR_L2_WARM = "input"

# Sarathi-Serve (Vidur's profiler) runs the vLLM custom kernels of its time for these ops:
# rms_norm_kernel, act_and_mul_kernel (silu_and_mul) and rotary_embedding_kernel each load one
# fp16 element per thread per iteration (no vector loads), a kernel hint (attrs.vector_bytes 2)
# the streaming model reads. The torch ops (add, gelu, layer_norm, embedding) are vectorised.
VIDUR_SCALAR_KERNELS = ("rmsnorm", "silu_and_mul", "rotary_emb_qk")

LICENSES = [("aiconfigurator", "LICENSE_aiconfigurator"), ("vidur", "LICENSE_vidur"),
            ("neusight", "LICENSE_neusight")]


class ConvertError(Exception):
    pass


def seconds(value, scale):
    """Latency string in a unit of `scale` seconds (Decimal) -> float seconds.

    Exact decimal arithmetic, then the nearest double, so that 126783.374 us prints as
    0.126783374 rather than a binary-rounding neighbour."""
    s = float(Decimal(value) * scale)
    if not s > 0.0:
        raise ConvertError("non-positive latency %r" % value)
    return s


US = Decimal(1) / Decimal(10 ** 6)
MS = Decimal(1) / Decimal(10 ** 3)


def dtype_of(name):
    if name not in DTYPES:
        raise ConvertError("unknown dtype %r" % name)
    return name


def record(hardware, op, latency_s, source, timing, kernel=None):
    rec = {"hardware": hardware, "op": op, "measured": {"latency_s": latency_s},
           "source": source, "timing": timing}
    if kernel:
        rec["kernel"] = kernel
    return rec


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ----------------------------------------------------------------------------- aiconfigurator

# The library each aiconfigurator attention label runs (attrs.attention_kernel): vLLM's
# vllm_flash_attn_fa2/fa3 say it; SGLang's `flash_attention` label is its FlashAttentionBackend
# (`--attention-backend fa3`), which calls sgl-kernel's FlashAttention-3 build, Ampere path
# included.  fa4 (Hopper head_dim 512) has no model of its own and keeps the FA3 default.
AIC_ATTENTION_KERNEL = {"vllm_flash_attn_fa2": "flash_attention_2",
                        "vllm_flash_attn_fa3": "flash_attention_3",
                        "flash_attention": "flash_attention_3"}


def aic_attention(rows, phase):
    out = []
    for i, r in enumerate(rows, 2):
        try:
            if r["phase"] != phase:
                raise ConvertError("phase %r in the %s table" % (r["phase"], phase))
            dtype = dtype_of(r["dtype"])
            kv_dtype = dtype_of(r["kv_cache_dtype"])
            causal = int(r["causal"])
            window = int(r["window_size"])
            if causal not in (0, 1) or window < 0:
                raise ConvertError("causal %r window_size %r" % (r["causal"], r["window_size"]))
            op = {"kind": "attention_" + phase,
                  "batch": int(r["batch"]),
                  "seq_q": int(r["q_len"]),
                  "seq_kv": int(r["kv_len"]),
                  "heads": int(r["num_heads"]),
                  "kv_heads": int(r["num_kv_heads"]),
                  "head_dim": int(r["head_dim"])}
            if phase == "prefill":
                op["causal"] = bool(causal)
            elif causal:
                op["causal"] = True
            op["dtype"] = dtype
            if kv_dtype != dtype:
                op["kv_dtype"] = kv_dtype
            op["page_size"] = AIC_PAGE_SIZE
            op["kv_cache_write"] = True
            # The collector replays the graph on the same cache: what fits L2 is warm.
            op["l2_warm"] = "all"
            if window > 0:
                op["sliding_window"] = window
            if r["kernel"] in AIC_ATTENTION_KERNEL:
                op["attention_kernel"] = AIC_ATTENTION_KERNEL[r["kernel"]]
            out.append(record(r["hardware"], op, seconds(r["latency_us"], US),
                              "aiconfigurator:" + r["source"], "graph", r["kernel"]))
        except (ConvertError, ValueError, KeyError) as e:
            raise ConvertError("attention_%s.csv line %d: %s" % (phase, i, e))
    return out


def aic_quantize(rows):
    out = []
    for i, r in enumerate(rows, 2):
        try:
            m, k = int(r["m"]), int(r["k"])
            din, dout = dtype_of(r["in_dtype"]), dtype_of(r["out_dtype"])
            # The shared table's own estimate: 2-byte read + 1-byte write per element.
            if int(r["bytes_moved"]) != 3 * m * k:
                raise ConvertError("bytes_moved %s != 3*m*k" % r["bytes_moved"])
            op = {"kind": "copy", "shape": [m, k], "dtype": din, "out_dtype": dout,
                  "l2_warm": "all"}
            out.append(record(r["hardware"], op, seconds(r["latency_us"], US),
                              "aiconfigurator:" + r["source"], "graph", r["kernel"]))
        except (ConvertError, ValueError, KeyError) as e:
            raise ConvertError("quantize_elementwise.csv line %d: %s" % (i, e))
    return out


# ----------------------------------------------------------------------------- vidur

def vidur_op(r):
    """One memory_bound_ops.csv row -> opmodel short-form op (checks the shape against the
    model configuration the profiler used)."""
    model, tp, kind = r["model"], int(r["tp"]), r["kind"]
    if model not in VIDUR_MODELS:
        raise ConvertError("unknown model %r" % model)
    heads, kv_heads, embd, mlp, vocab, max_pos = VIDUR_MODELS[model]
    rows_s, cols_s = r["shape_rows_x_cols"].split("x")
    rows, cols = int(rows_s), int(cols_s)
    nbytes = int(r["approx_bytes_moved"])
    dtype = dtype_of(r["dtype"])
    name = "%s/%s/tp%d" % (model, r["op"], tp)
    op = {"kind": None, "name": name}

    def expect(what, want, bytes_per_elem):
        if cols != want:
            raise ConvertError("%s: %d columns, the model config gives %d" % (what, cols, want))
        if nbytes != bytes_per_elem * rows * cols:
            raise ConvertError("%s: approx_bytes_moved %d != %d*rows*cols"
                               % (what, nbytes, bytes_per_elem))

    if kind in ("rmsnorm", "layernorm"):
        expect(kind, embd, 4)                        # read x, write y (fp16)
        op.update(kind=kind, shape=[rows, cols], dtype=dtype)
    elif kind == "silu_and_mul":
        # cols is the width of the gated input [T, 2*I/TP] (the up-projection output); the
        # output is [T, I/TP]: 2 bytes read + 1 written per input element = 3*rows*cols.
        expect(kind, 2 * mlp // tp, 3)
        op.update(kind="elementwise", op="silu_mul", shape=[rows, cols], dtype=dtype)
    elif kind == "gelu":
        expect(kind, mlp // tp, 4)                   # torch.nn.GELU() (erf), [T, I/TP]
        op.update(kind="elementwise", op="gelu", shape=[rows, cols], dtype=dtype)
    elif kind == "residual_add":
        expect(kind, embd, 6)                        # residual + hidden_states
        op.update(kind="elementwise", op="add", inputs=[[rows, cols], [rows, cols]], dtype=dtype)
    elif kind == "add3":
        expect(kind, embd, 8)                        # phi-2: attn + mlp + residual
        op.update(kind="elementwise", op="add", inputs=[[rows, cols]] * 3, dtype=dtype)
    elif kind == "rotary_emb_qk":
        # cols = (heads + kv_heads) * head_dim / TP: q and k together (Vidur asserts that TP
        # divides both head counts).
        hd = embd // heads
        if heads % tp or kv_heads % tp:
            raise ConvertError("TP %d does not divide %d/%d heads" % (tp, heads, kv_heads))
        hq, hk = heads // tp, kv_heads // tp
        expect(kind, (hq + hk) * hd, 4)
        # positions = arange(T) gather rows of a [max_position_embeddings, rotary_dim] cache
        # without a bounds check, so T > max_position_embeddings rows are read beyond it: the
        # kernel reads T distinct rows either way.
        op.update(kind="rope", batch=1, seq=rows, heads=hq, kv_heads=hk, head_dim=hd,
                  max_position=max(max_pos, rows), dtype=dtype, in_place=True)
        # No rotary_dim: the profiler builds get_rope(head_dim, rotary_dim=head_dim, ...) for
        # every model, phi-2 included (its partial_rotary_factor 0.4 is not passed on).
    elif kind == "embedding_gather":
        expect(kind, embd, 4)                        # read T rows, write [T, D]
        if tp != 1:
            # VocabParallelEmbedding holds vocab/TP rows per rank; no such row exists in the
            # shared table, whose duplicate shapes (the same [T, D] at every TP) were dropped.
            raise ConvertError("embedding row at TP %d" % tp)
        op.update(kind="embedding", tokens=rows, vocab=vocab, dim=cols, dtype=dtype)
    else:
        raise ConvertError("unknown kind %r" % kind)
    if VIDUR_L2_WARM and op["kind"] != "embedding":
        op["l2_warm"] = VIDUR_L2_WARM
    if kind in VIDUR_SCALAR_KERNELS:
        op["vector_bytes"] = 2
    return op


def vidur_memory_bound(rows):
    out = []
    for i, r in enumerate(rows, 2):
        try:
            if r["source"] != "vidur":
                raise ConvertError("source %r" % r["source"])
            out.append(record(r["hardware"], vidur_op(r), seconds(r["latency_us"], US),
                              "vidur", "kernel"))
        except (ConvertError, ValueError, KeyError) as e:
            raise ConvertError("memory_bound_ops.csv line %d: %s" % (i, e))
    return out


# ----------------------------------------------------------------------------- neusight

def neusight(rows, kind, opname, fname):
    out = []
    for i, r in enumerate(rows, 2):
        try:
            if r["OPName"] != opname:
                raise ConvertError("OPName %r" % r["OPName"])
            if r["Device"] not in NEUSIGHT_DEVICES:
                raise ConvertError("unknown Device %r" % r["Device"])
            if "Kernels" in r and r["Kernels"] != ";" + r["Kernel Name"]:
                raise ConvertError("more than one kernel launched: %r" % r["Kernels"])
            op = {"kind": kind, "shape": [int(r["B"]), int(r["H"])], "dtype": "fp32",
                  "l2_warm": "all"}
            out.append(record(NEUSIGHT_DEVICES[r["Device"]], op, seconds(r["Latency"], MS),
                              "neusight:" + kind, "events", r["Kernel Name"]))
        except (ConvertError, ValueError, KeyError) as e:
            raise ConvertError("%s line %d: %s" % (fname, i, e))
    return out


# ----------------------------------------------------------------------------- main

def write_jsonl(path, records):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(", ", ": ")))
            f.write("\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.path.join("..", "shared", "data"),
                    help="the shared reference data folder (default ../shared/data)")
    ap.add_argument("--out", default=os.path.join("data", "kernels"),
                    help="output folder (default data/kernels)")
    args = ap.parse_args(argv)

    meas = os.path.join(args.shared, "measured")
    aic = os.path.join(meas, "aiconfigurator")
    vid = os.path.join(meas, "vidur")
    neu = os.path.join(meas, "neusight")
    try:
        outputs = [
            ("aic_attention_prefill.jsonl",
             aic_attention(read_csv(os.path.join(aic, "attention_prefill.csv")), "prefill")),
            ("aic_attention_decode.jsonl",
             aic_attention(read_csv(os.path.join(aic, "attention_decode.csv")), "decode")),
            ("aic_quantize.jsonl",
             aic_quantize(read_csv(os.path.join(aic, "quantize_elementwise.csv")))),
            ("vidur_memory_bound.jsonl",
             vidur_memory_bound(read_csv(os.path.join(vid, "memory_bound_ops.csv")))),
            ("neusight_softmax.jsonl",
             neusight(read_csv(os.path.join(neu, "softmax.csv")), "softmax", "softmax",
                      "softmax.csv")),
            ("neusight_layernorm.jsonl",
             neusight(read_csv(os.path.join(neu, "layernorm.csv")), "layernorm", "ln",
                      "layernorm.csv")),
        ]
    except (ConvertError, OSError) as e:
        print("convert_kernel_data: %s" % e, file=sys.stderr)
        return 1

    os.makedirs(args.out, exist_ok=True)
    total = 0
    for fname, records in outputs:
        path = os.path.join(args.out, fname)
        write_jsonl(path, records)
        size = os.path.getsize(path)
        total += size
        print("%-28s %7d lines %10d bytes" % (fname, len(records), size))
    for folder, dest in LICENSES:
        path = os.path.join(args.out, dest)
        shutil.copyfile(os.path.join(meas, folder, "LICENSE"), path)
        total += os.path.getsize(path)
    print("%-28s %7d lines %10d bytes (%.1f MB, with the LICENSE files)"
          % ("total", sum(len(r) for _, r in outputs), total, total / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
