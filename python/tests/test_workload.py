"""opmodel.workload: the C workload API through the package — eager is the
graph time plus host gaps charged at idle power, the kernel-list reader's
errors surface as OpmodelError, and the totals agree with the CLI's JSON."""
import json
import os
import subprocess

import pytest

from conftest import ROOT, opmodel_bin
from opmodel import OpmodelError, load_hardware, predict, short_op
from opmodel.workload import Workload, hosts

KL = os.path.join(ROOT, "data", "energaizer", "workloads", "all", "gpt2model_gpt2_pbf16_b1_s128_modeprefill.json")


def test_eager_is_graph_plus_idle_gaps():
    hw = load_hardware("a100_40gb_pcie").with_clock(900e6)
    w = Workload()
    gemm = short_op("gemm", m=4096, n=4096, k=4096)
    add = short_op("elementwise", inputs=[[1024], [1024]], op="add")
    w.add_op(gemm).add_op(add, count=2)
    assert w.kernels == 3 and w.op_count == 2
    g = w.evaluate(hw, mode="graph")
    e = w.evaluate(hw, launch_interval_s=50e-6)
    pg, pa = predict(gemm, hw, model="extended_roofline"), predict(add, hw, model="extended_roofline")
    assert g.latency_s == pytest.approx(pg.latency_s + 2 * pa.latency_s)
    assert e.latency_s == pytest.approx(pg.latency_s + 2 * 50e-6)
    gap = 2 * (50e-6 - pa.latency_s)
    assert e.idle_s == pytest.approx(gap)
    assert e.energy_j == pytest.approx(g.energy_j + e.idle_power_w * gap)
    assert e.by_kind[0].name == "gemm"


def test_matches_cli_and_default_host():
    hw = load_hardware("a10").with_clock(900e6)
    r = Workload.from_file(KL).evaluate(hw)
    out = subprocess.run([opmodel_bin(), "workload", KL, "--hardware", "a10", "--clock-mhz", "900", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    assert j["kernels"] == r.kernels == 254 and j["implied"] == 12
    assert j["latency_s"] == pytest.approx(r.latency_s, rel=1e-9)
    assert r.launch_interval_s == hosts()[0][1]


def test_kernel_list_as_listed():
    w = Workload().set_implied_kernels(False).add_file(KL)
    assert w.kernels == 242 and w.implied == 0
    assert Workload.from_file(KL).implied == 12


def test_kernel_list_error():
    w = Workload()
    with pytest.raises(OpmodelError, match="k.json:0:op"):
        w.add_text('[[{"dim": 4}, ["pooling"]]]', "k.json")
    assert w.kernels == 0
