#!/usr/bin/python3
"""energy_fixture.py — regenerates tests/data/energy/a100_synthetic.jsonl (tests/data/energy/README.md):
every line's op predicted by `extended_roofline` on a copy of configs/hardware/a100_40gb_pcie.yaml whose
J/FLOP are x0.6, hbm J/byte x1.3, l2 J/byte x0.5 and idle power (static_power_w and the idle_power
table) x0.7, at the line's clock; the predicted latency and energy become its "measured" ones.  The
ops, their order and the clocks are the file's own.  Run after a change that moves the model's
energy (the active base power, a kernel model), from the source root:

    /usr/bin/python3 tools/energy_fixture.py build/src/cli/opmodel > /tmp/synthetic.jsonl
    mv /tmp/synthetic.jsonl tests/data/energy/a100_synthetic.jsonl
"""
import json
import re
import subprocess
import sys
import tempfile

FIXTURE = "tests/data/energy/a100_synthetic.jsonl"
SOURCE = "synthetic: opmodel extended_roofline on a100_40gb_pcie with compute x0.6, dram x1.3, l2 x0.5, idle x0.7"


def scaled_copy(text):
    out, level, in_idle = [], None, False
    for line in text.splitlines():
        m = re.match(r"^(\s*)(\S+):\s*([-+0-9.eE]+)(\s*#.*)?$", line)
        if re.match(r"^idle_power:", line):
            in_idle = True
        elif in_idle and not re.match(r"^\s+\S", line):
            in_idle = False
        if re.match(r"^\s*- name:\s*(\S+)", line):
            level = re.match(r"^\s*- name:\s*(\S+)", line).group(1)
        if m:
            indent, key, val = m.group(1), m.group(2), float(m.group(3))
            factor = None
            if key == "static_power_w" or in_idle:
                factor = 0.7
            elif key in ("bf16", "fp32", "fp16", "tf32", "fp8", "int8") and out and any(
                    "energy_j_per_flop" in l for l in out[-3:]):
                factor = 0.6
            elif key == "energy_j_per_byte":
                factor = {"hbm": 1.3, "l2": 0.5}.get(level)
            if factor is not None:
                line = "%s%s: %.17g" % (indent, key, val * factor)
        out.append(line)
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: energy_fixture.py OPMODEL_BIN")
    copy = scaled_copy(open("configs/hardware/a100_40gb_pcie.yaml").read())
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(copy)
        hw = f.name
    for line in open(FIXTURE):
        row = json.loads(line)
        cmd = [sys.argv[1], "predict", "--hardware", hw, "--model", "extended_roofline", "--op", "-"]
        if "clock_mhz" in row:
            cmd += ["--clock-mhz", str(row["clock_mhz"])]
        p = json.loads(subprocess.run(cmd, input=json.dumps(row["op"]), capture_output=True, text=True,
                                      check=True).stdout)
        out = {"hardware": "a100_40gb_pcie", "op": row["op"],
               "measured": {"latency_s": float("%g" % p["latency_s"]), "energy_j": float("%g" % p["energy_j"])},
               "source": SOURCE}
        if "clock_mhz" in row:
            out["clock_mhz"] = row["clock_mhz"]
        print(json.dumps(out))


if __name__ == "__main__":
    main()
