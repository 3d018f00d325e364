#!/usr/bin/env python3
"""Replaces what lies between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in FILE with TEXT.

    scripts/write_section.py FILE NAME TEXT

The bench scripts use it to rewrite their tables in docs/benchmarks.md.
"""
import sys

path, name, body = sys.argv[1:4]
text = open(path).read()
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path} has no {name} markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + body + "\n" + end + tail)
