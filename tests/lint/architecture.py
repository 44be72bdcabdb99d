#!/usr/bin/env python3
"""architecture.py ROOT - docs/ARCHITECTURE.md's layout names every source file, and every file
it names exists. The layout block is a tree: a line "  name/" opens a folder at its indent; the
file names after it (a.c, b.{h,c}, mnemo_memory*.c) belong to the innermost open folder."""
import fnmatch
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
text = open(os.path.join(root, "docs/ARCHITECTURE.md"), encoding="utf-8").read()
m = re.search(r"## Layout\n+```\n(.*?)```", text, re.S)
if not m:
    sys.exit("architecture: docs/ARCHITECTURE.md has no ## Layout code block")

NAME = re.compile(r"(?<![/A-Za-z0-9_.*-])[A-Za-z0-9_*.-]+\.(?:\{[a-z,]+\}|[a-z]+)(?![A-Za-z0-9])")
FOLDER = re.compile(r"^( *)([A-Za-z0-9_-]+)/(?:\s|$)")


def expand(name):
    b = re.match(r"(.*)\.\{([a-z,]+)\}$", name)
    return [f"{b.group(1)}.{ext}" for ext in b.group(2).split(",")] if b else [name]


named = []  # (folder, pattern)
stack = []  # (indent, folder path)
for line in m.group(1).splitlines():
    f = FOLDER.match(line)
    if f and f.group(2) not in ("tests", "fuzz", "bench", "docs", "python", "js"):
        indent = len(f.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        stack.append((indent, f"{parent}{f.group(2)}/"))
        body = line[f.end():]
    elif f:
        stack = []
        continue
    else:
        indent = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= indent:  # a file line back at a folder's indent
            stack.pop()
        body = line
    if not stack:
        if line.startswith("include/"):
            named.append(("include/", "mnemo.h"))
        continue
    for name in NAME.findall(body):
        if "/" in name or name.startswith("."):
            continue
        for n in expand(name):
            named.append((stack[-1][1], n))

files = []
for top in ("src", "app", "include"):
    for dirpath, _, names in os.walk(os.path.join(root, top)):
        for n in names:
            if n.endswith((".c", ".h", ".def")):
                files.append(os.path.relpath(os.path.join(dirpath, n), root))

bad = 0
for path in sorted(files):
    folder, base = os.path.dirname(path) + "/", os.path.basename(path)
    if not any(folder == f and fnmatch.fnmatch(base, p) for f, p in named):
        print(f"architecture: {path} is not described in docs/ARCHITECTURE.md's layout")
        bad = 1
for folder, pattern in named:
    if not any(os.path.dirname(p) + "/" == folder and fnmatch.fnmatch(os.path.basename(p), pattern) for p in files):
        print(f"architecture: docs/ARCHITECTURE.md names {folder}{pattern}, which does not exist")
        bad = 1
sys.exit(bad)
