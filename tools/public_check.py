#!/usr/bin/env python3
"""Held-out check of the shipped hardware entries against published figures.

Reads data/public/figures.csv (one published measurement per row: a GEMM's or an
attention kernel's TFLOPS, or a time), predicts the same op with the built-in
hardware entry through the opmodel CLI (`predict --batch`, no calibration) and
prints predicted / published time per row and model.  With --sanity it also
checks, on every built-in entry, properties that need no measurement: a large
GEMM's share of the dense peak, the small-GEMM floor, a 1 GiB copy's share of
the DRAM bandwidth, attention below the GEMM rate, decode bound by the KV
stream, and no level the hardware lacks.

Nothing here is fitted: the figures are a held-out check (data/public/README.md).

    /usr/bin/python3 tools/public_check.py [--opmodel build/src/cli/opmodel]
        [--figures data/public/figures.csv] [--models extended_roofline,effective_roofline]
        [--format table|csv|json] [--sanity]

Exit status: 0, or 2 with one line on stderr when the CLI or a row fails.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# A prediction this far from a published figure (either way) is a gross miss
# in the sense of docs/gemm_models.md, "Held-out public figures".
GROSS = 1.3


class CheckError(Exception):
    pass


def published_work(op):
    """FLOPs by the convention the publishers use to turn time into TFLOPS:
    2mnk per GEMM; 4 * batch * heads * seq_q * seq_kv * head_dim for attention
    forward, halved under a causal mask (FlashAttention's benchmark)."""
    kind = op.get("kind")
    if kind in ("gemm", "batched_gemm"):
        return 2.0 * op.get("batch", 1) * op["m"] * op["n"] * op["k"]
    if kind == "attention_prefill":
        f = 4.0 * op["batch"] * op["heads"] * op["seq_q"] * op["seq_kv"] * op["head_dim"]
        return f / 2 if op.get("causal") else f
    raise CheckError("no published-work convention for kind %r" % kind)


def published_latency(row, op):
    v = float(row["published_value"])
    unit = row["published_unit"]
    if not v > 0:
        raise CheckError("%s: published_value: expected a positive number, got %r" % (row["id"], row["published_value"]))
    if unit == "TFLOPS":
        return published_work(op) / (v * 1e12)
    if unit == "us":
        return v * 1e-6
    if unit == "s":
        return v
    raise CheckError("%s: published_unit: expected TFLOPS, us or s, got %r" % (row["id"], unit))


def run_batch(opmodel, hardware, model, ops):
    """Predict ops (a list of dicts) on one built-in hardware entry; returns
    the prediction objects in order."""
    text = "".join(json.dumps(o) + "\n" for o in ops)
    try:
        r = subprocess.run([opmodel, "predict", "--hardware", hardware, "--batch", "-", "--model", model],
                           input=text, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CheckError("%s: %s" % (opmodel, e))
    # A line the model refuses comes back as {"line", "error"} (exit 1); any
    # other failure of the CLI is fatal.
    if r.returncode not in (0, 1):
        raise CheckError("opmodel predict --hardware %s --model %s: exit %d: %s" % (hardware, model, r.returncode, r.stderr.strip()))
    out = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    if len(out) != len(ops):
        raise CheckError("opmodel predict --batch gave %d lines for %d ops" % (len(out), len(ops)))
    return out


def load_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = ("id", "hardware", "op", "published_value", "published_unit", "in_config", "source_key")
    for i, row in enumerate(rows, 2):
        for k in need:
            if not row.get(k):
                raise CheckError("%s:%d: %s: expected a value" % (path, i, k))
        try:
            row["op_obj"] = json.loads(row["op"])
        except ValueError as e:
            raise CheckError("%s:%d: op: expected a JSON object (%s)" % (path, i, e))
    return rows


def check_figures(opmodel, rows, models):
    results = []
    by_hw = {}
    for row in rows:
        by_hw.setdefault(row["hardware"], []).append(row)
    for model in models:
        for hw, group in by_hw.items():
            preds = run_batch(opmodel, hw, model, [r["op_obj"] for r in group])
            for row, p in zip(group, preds):
                if "error" in p:
                    raise CheckError("%s on %s (%s): %s" % (row["id"], hw, model, p["error"]))
                pub = published_latency(row, row["op_obj"])
                d = p.get("diagnostics", {})
                results.append({
                    "id": row["id"], "hardware": hw, "kind": row["op_obj"]["kind"],
                    "dtype": row["op_obj"].get("dtype"), "model": model,
                    "published_value": float(row["published_value"]), "published_unit": row["published_unit"],
                    "published_latency_s": pub, "predicted_latency_s": p["latency_s"],
                    "predicted_tflops": published_work(row["op_obj"]) / p["latency_s"] / 1e12,
                    "ratio": p["latency_s"] / pub,
                    "limiting": d.get("limiting_resource") or p.get("bound", ""),
                    "fallback": d.get("fallback", ""), "in_config": row["in_config"],
                    "source_key": row["source_key"]})
    return results


def summarise(results):
    out = {}
    for r in results:
        out.setdefault(r["model"], []).append(r)
    summary = {}
    for model, rs in out.items():
        held = [r for r in rs if r["in_config"] == "no"]
        lg = [math.log(r["ratio"]) for r in held]
        summary[model] = {
            "rows": len(rs), "held_out_rows": len(held),
            "held_out_geomean_ratio": math.exp(sum(lg) / len(lg)) if lg else None,
            "held_out_mape_pct": 100 * sum(abs(r["ratio"] - 1) for r in held) / len(held) if held else None,
            "gross": [r["id"] for r in held if r["ratio"] > GROSS or r["ratio"] < 1 / GROSS]}
    return summary


# --- physical sanity on every built-in entry ---------------------------------

GEMM_BIG = {"kind": "gemm", "m": 8192, "n": 8192, "k": 8192, "dtype": "bf16"}
GEMM_BIG8 = dict(GEMM_BIG, dtype="fp8_e4m3", out_dtype="bf16")
GEMM_SMALL = {"kind": "gemm", "m": 256, "n": 256, "k": 256, "dtype": "bf16"}
COPY_1G = {"kind": "copy", "shape": [16384, 32768], "dtype": "bf16"}          # 1 GiB read, 1 GiB written
PREFILL = {"kind": "attention_prefill", "batch": 1, "seq_q": 8192, "seq_kv": 8192, "heads": 32,
           "kv_heads": 8, "head_dim": 128, "causal": True, "dtype": "bf16"}
DECODE = {"kind": "attention_decode", "batch": 64, "seq_kv": 8192, "heads": 32, "kv_heads": 8,
          "head_dim": 128, "dtype": "bf16"}
DECODE_KV_BYTES = 2.0 * 64 * 8192 * 8 * 128 * 2                              # K and V, bf16


def hardware_table(opmodel):
    r = subprocess.run([opmodel, "hardware", "list"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise CheckError("opmodel hardware list: %s" % r.stderr.strip())
    names = [line.split()[0] for line in r.stdout.splitlines()[1:] if line.strip()]
    table = {}
    for n in names:
        s = subprocess.run([opmodel, "hardware", "show", n, "--format", "json"], capture_output=True, text=True, timeout=60)
        if s.returncode != 0:
            raise CheckError("opmodel hardware show %s: %s" % (n, s.stderr.strip()))
        table[n] = json.loads(s.stdout)
    return table


def sanity(opmodel, model, hw_table):
    """One row per built-in entry: the measured quantities and a list of
    problems naming what is out of its physical range (or what the model
    refused to predict)."""
    rows = []
    for name, hw in hw_table.items():
        tpk = hw["compute"].get("tensor_flops_per_s", {})
        levels = [lv["name"] for lv in hw["memory"]["levels"]]
        hbm = [lv for lv in hw["memory"]["levels"] if lv["name"] == "hbm"][0]
        is_gpu = hw.get("kind") == "gpu"
        # Parts without a bf16 tensor path (V100, T4) run their fp16 one.
        dt = "bf16" if "bf16" in tpk or "fp16" not in tpk else "fp16"
        names = ["gemm_big", "gemm_small", "copy", "prefill", "decode"]
        ops = [dict(o, dtype=dt) for o in (GEMM_BIG, GEMM_SMALL, COPY_1G, PREFILL, DECODE)]
        if "fp8_e4m3" in tpk:
            names.append("gemm_big8")
            ops.append(GEMM_BIG8)
        p = dict(zip(names, run_batch(opmodel, name, model, ops)))
        probs = ["%s: %s" % (k, v["error"]) for k, v in p.items() if "error" in v]
        ok = {k: v for k, v in p.items() if "error" not in v}
        row = {"hardware": name, "kind": hw.get("kind"), "model": model}

        def lat(k):
            return ok[k]["latency_s"] if k in ok else None
        peak = tpk.get(dt)
        row["dtype"] = dt
        if peak and lat("gemm_big"):
            row["gemm_bf16_frac"] = published_work(GEMM_BIG) / lat("gemm_big") / peak
            if not 0.5 <= row["gemm_bf16_frac"] <= 0.95:
                probs.append("%s 8192^3 at %.2f of the dense peak" % (dt, row["gemm_bf16_frac"]))
        if lat("gemm_big8"):
            row["gemm_fp8_frac"] = published_work(GEMM_BIG8) / lat("gemm_big8") / tpk["fp8_e4m3"]
            if not 0.45 <= row["gemm_fp8_frac"] <= 0.95:
                probs.append("fp8 8192^3 at %.2f of the dense peak" % row["gemm_fp8_frac"])
        if lat("gemm_small"):
            row["gemm_256_us"] = lat("gemm_small") * 1e6
            if is_gpu and not 2 <= row["gemm_256_us"] <= 8:
                probs.append("256^3 GEMM in %.2f us" % row["gemm_256_us"])
        if lat("copy"):
            row["copy_bw_frac"] = 2 * 2**30 / lat("copy") / hbm["bandwidth_bytes_per_s"]
            if not 0.6 <= row["copy_bw_frac"] <= 1.0:
                probs.append("1 GiB copy at %.2f of the DRAM bandwidth" % row["copy_bw_frac"])
        if lat("prefill") and lat("gemm_big"):
            row["prefill_over_gemm"] = (published_work(PREFILL) / lat("prefill")) / (published_work(GEMM_BIG) / lat("gemm_big"))
            if row["prefill_over_gemm"] > 1.0:
                probs.append("causal prefill at %.2f x the GEMM rate" % row["prefill_over_gemm"])
        if lat("decode"):
            row["decode_kv_bw_frac"] = DECODE_KV_BYTES / lat("decode") / hbm["bandwidth_bytes_per_s"]
            if not 0.4 <= row["decode_kv_bw_frac"] <= 1.0:
                probs.append("decode KV stream at %.2f of the DRAM bandwidth" % row["decode_kv_bw_frac"])
        fallbacks = sorted({q.get("diagnostics", {}).get("fallback", "") for q in ok.values()} - {""})
        row["fallback"] = "; ".join(fallbacks)
        if fallbacks and hw["compute"].get("matrix_instruction") not in ("mxu", "mme"):
            probs.append("fallback on a GPU: " + row["fallback"])
        lacking = sorted({lv for q in ok.values() for lv in q.get("memory_access", {}) if lv not in levels})
        if lacking:
            probs.append("traffic on levels the entry lacks: " + ",".join(lacking))
        row["problems"] = probs
        rows.append(row)
    return rows


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opmodel", default=os.path.join(ROOT, "build", "src", "cli", "opmodel"))
    ap.add_argument("--figures", default=os.path.join(ROOT, "data", "public", "figures.csv"))
    ap.add_argument("--models", default="extended_roofline,effective_roofline")
    ap.add_argument("--format", choices=("table", "csv", "json"), default="table")
    ap.add_argument("--sanity", action="store_true", help="also run the physical sanity checks on every built-in entry")
    a = ap.parse_args(argv)
    models = [m for m in a.models.split(",") if m]
    try:
        rows = load_rows(a.figures)
        res = check_figures(a.opmodel, rows, models)
        summ = summarise(res)
        san = []
        if a.sanity:
            hw_table = hardware_table(a.opmodel)
            for m in models:
                san += sanity(a.opmodel, m, hw_table)
    except (CheckError, OSError, ValueError, KeyError) as e:
        print("public_check: %s" % e, file=sys.stderr)
        return 2
    if a.format == "json":
        json.dump({"rows": res, "summary": summ, "sanity": san}, sys.stdout, indent=1)
        print()
        return 0
    if a.format == "csv":
        keys = ["id", "hardware", "kind", "dtype", "model", "published_value", "published_unit",
                "published_latency_s", "predicted_latency_s", "predicted_tflops", "ratio", "limiting",
                "fallback", "in_config", "source_key"]
        w = csv.DictWriter(sys.stdout, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in res:
            w.writerow(r)
        return 0
    print("%-22s %-9s %-17s %-18s %11s %11s %11s %6s %s" % (
        "id", "hardware", "kind/dtype", "model", "published", "pub_us", "pred_us", "ratio", "limiting"))
    for r in res:
        mark = " *" if r["in_config"] == "yes" else ("  GROSS" if r["ratio"] > GROSS or r["ratio"] < 1 / GROSS else "")
        print("%-22s %-9s %-17s %-18s %7g %-3s %11.2f %11.2f %6.2f %s%s%s" % (
            r["id"], r["hardware"], "%s/%s" % (r["kind"], r["dtype"]), r["model"], r["published_value"],
            "TF" if r["published_unit"] == "TFLOPS" else r["published_unit"], r["published_latency_s"] * 1e6,
            r["predicted_latency_s"] * 1e6, r["ratio"], r["limiting"],
            " [fallback: %s]" % r["fallback"] if r["fallback"] else "", mark))
    print("ratio = predicted / published time (> 1: predicted slower); * = the entry cites this figure (not held out)")
    for m, s in summ.items():
        print("%s: %d held-out rows, geomean ratio %s, MAPE %s%%, beyond %.1fx: %s" % (
            m, s["held_out_rows"], fmt(s["held_out_geomean_ratio"], ".3f"), fmt(s["held_out_mape_pct"], ".1f"),
            GROSS, ", ".join(s["gross"]) or "none"))
    if san:
        print()
        print("%-15s %-18s %7s %7s %8s %7s %8s %8s  %s" % (
            "hardware", "model", "16bfrac", "fp8frac", "256^3_us", "copy_bw", "pf/gemm", "dec_bw", "problems"))
        for r in san:
            print("%-15s %-18s %7s %7s %8s %7s %8s %8s  %s" % (
                r["hardware"], r["model"], fmt(r.get("gemm_bf16_frac"), ".2f"), fmt(r.get("gemm_fp8_frac"), ".2f"),
                fmt(r.get("gemm_256_us"), ".2f"), fmt(r.get("copy_bw_frac"), ".2f"), fmt(r.get("prefill_over_gemm"), ".2f"),
                fmt(r.get("decode_kv_bw_frac"), ".2f"), "; ".join(r["problems"]) or "ok"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
