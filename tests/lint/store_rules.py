#!/usr/bin/env python3
"""store_rules.py — no business rule in src/store/ (issue 40, docs/ARCHITECTURE.md "Layers").

The store persists what the engine decided; it does not decide. This lint fails on the SQL
shapes each rule took when it lived in the backends, so that none comes back:

  titles      a title derived from a message's content, or set only when the session has none
  expiry      a TTL session's expiry slid forward in SQL (now + ttl_ms)
  events      an event kind written as a literal (which change makes which event)
  summaries   summaries dropped as a side effect of a change to messages
  turn limit  a comparison with max_turns
  versioning  a memory version closed in SQL (superseded_at / valid_to computed)

Schema migrations (schema.h) may derive stored values once, at an upgrade: they are left out.
Usage: store_rules.py ROOT
"""
import os
import re
import sys

RULES = [
    ("titles", re.compile(r"TITLE_OF|WHEN\s+(?:s\.)?title\s+IS\s+NULL|ltrim\(\s*\w*\.?content", re.I)),
    ("expiry", re.compile(r"\+\s*ttl_ms|ttl_ms\s*\+", re.I)),
    ("events", re.compile(r"INSERT\s+INTO\s+events[^;]*VALUES\s*\([^)]*'", re.I)),
    ("summaries", re.compile(r"DELETE\s+FROM\s+summaries[^\"]*\bseq\b", re.I)),
    ("turn limit", re.compile(r"max_turns\s*[<>]|[<>]=?\s*max_turns", re.I)),
    ("versioning", re.compile(r"superseded_at\s*=\s*CASE|(max|greatest)\(\s*valid_from", re.I)),
]


def sql_text(source):
    """The C string literals of a file, joined per statement, with their first line numbers."""
    # adjacent literals form one statement: join runs of them so a rule split over lines matches
    joined, line, run = [], None, ""
    last_end = -1
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', source):
        between = source[last_end:m.start()] if last_end >= 0 else ""
        if last_end >= 0 and re.fullmatch(r"[\s\\]*(?:\w+\s*)?", between):
            run += m.group(1)
        else:
            if run:
                joined.append((line, run))
            line, run = source.count("\n", 0, m.start()) + 1, m.group(1)
        last_end = m.end()
    if run:
        joined.append((line, run))
    return joined


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    store = os.path.join(root, "src", "store")
    bad = 0
    for dirpath, _, files in os.walk(store):
        for name in sorted(files):
            if not name.endswith((".c", ".h")) or name == "schema.h":
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                source = f.read()
            # macros that build SQL are checked by their text too
            texts = sql_text(source) + [
                (source.count("\n", 0, m.start()) + 1, m.group(0))
                for m in re.finditer(r"#define\s+\w+\(?[^\n]*(?:\\\n[^\n]*)*", source)
            ]
            for line, text in texts:
                for rule, pattern in RULES:
                    if pattern.search(text):
                        rel = os.path.relpath(path, root)
                        print(f"{rel}:{line}: {rule} decided in the store: {pattern.search(text).group(0)!r}"
                              " (it belongs in src/engine/)")
                        bad = 1
    if bad:
        print("store_rules: the store persists what the engine decided (tests/lint/store_rules.py)")
    return bad


if __name__ == "__main__":
    sys.exit(main())
