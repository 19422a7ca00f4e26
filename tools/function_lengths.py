#!/usr/bin/env python3
"""Prints the longest functions of C++ files (top-level and out-of-class definitions), to keep
each readable at once. Usage: tools/function_lengths.py FILE... [--max N] (exit 1 above N)."""
import re
import sys


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        starts = re.match(r"^[A-Za-z~].*\(", line) and not re.match(
            r"^(namespace|struct|class|enum|using|template|#)", line)
        if not starts:
            i += 1
            continue
        j = i  # the signature may span lines; it ends with '{' (a definition) or ';'
        while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
            j += 1
        if j >= len(lines) or lines[j].rstrip().endswith(";"):
            i = j + 1
            continue
        depth, k = 0, j
        while k < len(lines):
            depth += lines[k].count("{") - lines[k].count("}")
            if depth == 0:
                break
            k += 1
        out.append((k - i + 1, f"{path}:{i + 1}", line.strip()[:70]))
        i = k + 1
    return out


def main():
    args = sys.argv[1:]
    limit = None
    if "--max" in args:
        limit = int(args[args.index("--max") + 1])
        del args[args.index("--max"):args.index("--max") + 2]
    found = sorted((f for p in args for f in functions(p)), reverse=True)
    for n, where, sig in found[:5]:
        print(f"{n:5d}  {where}  {sig}")
    if limit is not None and found and found[0][0] > limit:
        sys.exit(1)


main()
