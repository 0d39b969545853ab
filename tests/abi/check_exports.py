#!/usr/bin/env python3
"""ABI check: the dynamic symbols libopmodel.so exports must be exactly the
functions declared in include/opmodel/*.h, and each declaration must carry
OPM_API.  The declared set is read from every header in the directory, so a
new header is covered without editing this script.

usage: check_exports.py HEADER_DIR LIBOPMODEL_SO [--nm NM]
       check_exports.py HEADER_DIR --list      (print the declared names)
"""
import glob
import os
import re
import subprocess
import sys


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out, skip = [], 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            # #ifdef __cplusplus blocks hold only the extern "C" braces.
            if re.match(r"#\s*ifdef\s+__cplusplus", s):
                skip = 1
            elif skip and re.match(r"#\s*endif", s):
                skip = 0
            continue
        if not skip:
            out.append(line)
    return "\n".join(out)


def declarations(path):
    """(name, has_marker) for each top-level function declaration."""
    text, depth, stmt, found = strip(open(path, encoding="utf-8").read()), 0, [], []
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                stmt = []       # end of a struct/enum body: drop it
            continue
        if depth:
            continue
        if ch == ";":
            s = " ".join("".join(stmt).split())
            stmt = []
            if not s or s.startswith("typedef") or "(" not in s:
                continue
            m = re.match(r"(.*?)\b([A-Za-z_]\w*)\s*\(", s)
            if m:
                found.append((m.group(2), re.search(r"\bOPM_API\b", m.group(1)) is not None))
        else:
            stmt.append(ch)
    return found


def main(argv):
    hdir = argv[1]
    declared, errors = {}, []
    for h in sorted(glob.glob(os.path.join(hdir, "*.h"))):
        for name, marked in declarations(h):
            declared[name] = h
            if not marked:
                errors.append("%s: %s is declared without OPM_API" % (os.path.basename(h), name))
    if len(argv) > 2 and argv[2] == "--list":
        print("\n".join(sorted(declared)))
        return 0
    nm = "nm"
    if "--nm" in argv:
        nm = argv[argv.index("--nm") + 1]
    out = subprocess.run([nm, "-D", "--defined-only", "--extern-only", argv[2]],
                         check=True, capture_output=True, text=True).stdout
    exported = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TDBRVWi":
            exported.add(parts[2].split("@")[0])
    for name in sorted(exported - set(declared)):
        errors.append("exported but not declared in a public header: %s" % name)
    for name in sorted(set(declared) - exported):
        errors.append("declared in %s but not exported: %s" % (os.path.basename(declared[name]), name))
    for e in errors:
        print(e)
    print("%d declared, %d exported, %d problems" % (len(declared), len(exported), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
