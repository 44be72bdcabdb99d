#!/usr/bin/env python3
"""names.py — names that show their tier (docs/ARCHITECTURE.md "Names"): no two functions of
mnemo (mn_, mn__, srv_, cli_) whose names differ only in underscores, so that a public function
(mn_session_fork) and the engine's use case behind it (mn__fork_session) are never mistaken for
each other. Usage: names.py ROOT. Prints each clash; exits 1 when there is one."""
import collections
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
called = re.compile(r"\b((?:mn_|srv_|cli_)[A-Za-z0-9_]*)\s*\(")
names = collections.defaultdict(set)
for top in ("include", "src", "app"):
    for path in sorted((root / top).rglob("*.[ch]")):
        for name in called.findall(path.read_text(encoding="utf-8", errors="replace")):
            names[name.replace("_", "")].add(name)
clashes = sorted(sorted(v) for v in names.values() if len(v) > 1)
for c in clashes:
    print("names: differ only in underscores: " + ", ".join(c))
print(f"{0 if clashes else 1} passed, {1 if clashes else 0} failed")
sys.exit(1 if clashes else 0)
