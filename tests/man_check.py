#!/usr/bin/env python3
"""man_check.py — every command `opmodel --help` lists (and trace's
subcommands) has a generated man page, and each page's preformatted body is
exactly that command's --help text.

usage: man_check.py OPMODEL MANDIR
"""
import os
import re
import subprocess
import sys


def unroff(line: str) -> str:
    line = line.replace("\\-", "-")
    if line.startswith("\\&"):
        line = line[2:]
    return line.replace("\\e", "\\")


def main():
    exe, mandir = sys.argv[1], sys.argv[2]
    top = subprocess.run([exe, "--help"], check=True, capture_output=True, text=True).stdout
    cmds = []
    in_list = False
    for ln in top.splitlines():
        if ln.startswith("commands:"):
            in_list = True
            continue
        if in_list and not ln.strip():
            break
        if in_list:
            m = re.match(r"\s+(\S+(?: [a-z]+)?)\s{2,}", ln)
            words = m.group(1).split() if m else ln.split()[:1]
            cmds.append(words)
    cmds.append(["trace", "diff"])  # trace's second subcommand, listed under `trace --help`
    cmds.append([])
    failures = []
    for words in cmds:
        name = "opmodel" + "".join("-" + w for w in words) + ".1"
        path = os.path.join(mandir, name)
        if not os.path.exists(path):
            failures.append(f"{name}: missing (add {words} to man/meson.build)")
            continue
        body = open(path, encoding="utf-8").read().split("\n.nf\n", 1)[1].split("\n.fi\n", 1)[0]
        page = "\n".join(unroff(ln) for ln in body.split("\n"))
        helptext = subprocess.run([exe, *words, "--help"], check=True, capture_output=True, text=True).stdout
        if page != helptext.rstrip("\n"):
            failures.append(f"{name}: differs from `opmodel {' '.join(words)} --help`")
    for f in failures:
        print(f)
    print(f"{len(cmds)} commands, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
