#!/usr/bin/env python3
"""names.py — names that show their tier (docs/ARCHITECTURE.md "Symbols"): a function of src/
named mn_ is one of include/mnemo.h (an internal one outside its file is mn__), and no two
functions of mnemo (mn_, mn__, srv_, cli_) have names that differ only in underscores, so that a
public function (mn_session_fork) and the engine's use case behind it (mn__fork_session) are
never mistaken for each other. Usage: names.py ROOT. Prints each finding; exits 1 on any."""
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
bad = ["names: differ only in underscores: " + ", ".join(c)
       for c in sorted(sorted(v) for v in names.values() if len(v) > 1)]

public = set(re.findall(r"\b(mn_[a-z0-9]\w*)\s*\(", (root / "include" / "mnemo.h").read_text(encoding="utf-8")))
defined = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(mn_[a-z0-9]\w*)\(", re.M)
for path in sorted((root / "src").rglob("*.c")):
    for name in defined.findall(path.read_text(encoding="utf-8", errors="replace")):
        if name not in public:
            bad.append(f"names: {path.relative_to(root)}: {name} is not in mnemo.h: name it mn__ (or static)")
for b in bad:
    print(b)
print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
sys.exit(1 if bad else 0)
