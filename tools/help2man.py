#!/usr/bin/env python3
"""help2man.py — writes a man page (roff) for one `opmodel` command from its
`--help` text, so the manual cannot drift from the program: the build runs
this for every command (man/meson.build) and tests/man_check.py checks that
every command `opmodel --help` lists has a page whose text is its --help.

usage: help2man.py OPMODEL OUT.1 [COMMAND WORD...]   (no command: the opmodel(1) overview)
"""
import datetime
import subprocess
import sys


def roff_escape(line: str) -> str:
    line = line.replace("\\", "\\e")
    # A line starting with . or ' is a roff request: protect it.
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line.replace("-", "\\-")


def page(exe: str, words: list) -> str:
    out = subprocess.run([exe, *words, "--help"], check=True, capture_output=True, text=True).stdout
    name = "opmodel" + "".join("-" + w for w in words)
    summary = {
        (): "predict how an accelerator executes one operation, without running it",
        # Not in the overview's list (which names `trace report` only).
        ("trace", "diff"): "two traces side by side",
    }.get(tuple(words))
    if summary is None:
        # The one-line description `opmodel --help` gives the command.
        top = subprocess.run([exe, "--help"], check=True, capture_output=True, text=True).stdout
        key = " ".join(words)
        summary = next((ln.strip()[len(key):].strip() for ln in top.splitlines()
                        if ln.strip().startswith(key + " ")), "an opmodel command")
    lines = out.rstrip("\n").split("\n")
    r = [f'.TH {name.upper()} 1 "" "opmodel" "opmodel manual"',
         ".SH NAME", f"{roff_escape(name)} \\- {roff_escape(summary)}",
         ".SH DESCRIPTION",
         "The text below is the command's \\fB\\-\\-help\\fR output.",
         ".PP", ".nf"]
    r += [roff_escape(ln) for ln in lines]
    r += [".fi", ".SH SEE ALSO", "\\fBopmodel\\fR(1); the documents under docs/ in the source tree."]
    return "\n".join(r) + "\n"


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    exe, out, words = argv[1], argv[2], argv[3:]
    text = page(exe, words)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
