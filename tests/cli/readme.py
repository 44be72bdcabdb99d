#!/usr/bin/env python3
"""readme.py PAGE SCRIPT — writes SCRIPT, a bash script that runs the shell examples of a
Markdown page as written, for tests/cli/t0120-readme.sh; prints how many blocks it took.

An example is a fenced `sh` block right after one of these lines (blank lines between are fine):

    <!-- example: run -->                     runs as written
    <!-- example: run against mnemo serve --> runs as written once `mnemo serve` (no arguments:
                                              127.0.0.1:8765, the database of MNEMO_DB) answers

Blocks run in page order in ONE bash (`set -euo pipefail`), so a variable one block sets (S=…,
export MNEMO_DB=…) holds in the blocks after it. Each block's commands are traced on stderr
(`+ README.md:LINE: command`). `curl` runs with --fail-with-body, so an HTTP error status fails
the example as a command failure would. The server the harness starts is stopped when the
script exits. The caller chooses the directory, PATH (the `mnemo` under test) and environment.
"""
import re
import shlex
import sys

MARK_RE = re.compile(r"^<!-- example: (run|run against mnemo serve) -->\s*$")
FENCE_RE = re.compile(r"^```(\S*)\s*$")

PROLOGUE = r"""set -euo pipefail
# The harness's own files live outside the examples' directory: a `curl` first on PATH that
# adds --fail-with-body, so that an HTTP error status (415, 404, …) fails the example as a failed
# command does, and the started server's output.
__h=$(mktemp -d)
printf '#!/bin/sh\nexec %s --fail-with-body "$@"\n' "$(command -v curl)" >"$__h/curl"
chmod +x "$__h/curl"
PATH=$__h:$PATH
__serve_pid=
__stop_serve() {
    { local rc=$?; set +x; } 2>/dev/null
    if [ -n "$__serve_pid" ]; then
        kill -TERM "$__serve_pid" 2>/dev/null || true
        wait "$__serve_pid" || { rc=$?; echo "readme: mnemo serve exited with status $rc: $(cat "$__h/serve.err")" >&2; }
    fi
    rm -rf "$__h"
    exit "$rc"
}
trap __stop_serve EXIT
# Starts `mnemo serve` as a reader would and waits until it printed its URL (it does once it
# listens); gives up when it exits first.
__start_serve() {
    [ -z "$__serve_pid" ] || return 0
    mnemo serve >"$__h/serve.out" 2>"$__h/serve.err" &
    __serve_pid=$!
    until [ -s "$__h/serve.out" ]; do
        if ! kill -0 "$__serve_pid" 2>/dev/null; then
            echo "readme: mnemo serve exited before listening: $(cat "$__h/serve.err")" >&2
            __serve_pid=
            return 1
        fi
        sleep 0.05
    done
}
"""


def blocks(path):
    """[(line of the fence, kind, text)] of the marked blocks of the page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = MARK_RE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = FENCE_RE.match(lines[j]) if j < len(lines) else None
        if not fence or fence.group(1) != "sh":
            sys.exit("readme.py: %s:%d: the example marker is not followed by a ```sh block" % (path, i + 1))
        k = j + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        if k == len(lines):
            sys.exit("readme.py: %s:%d: the block is not closed" % (path, j + 1))
        out.append((j + 1, m.group(1), "\n".join(lines[j + 1:k])))
        i = k + 1
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: readme.py PAGE SCRIPT")
    page, script = sys.argv[1], sys.argv[2]
    found = blocks(page)
    name = page.rsplit("/", 1)[-1]
    out = PROLOGUE.split("\n")
    for line, kind, text in found:
        out.append("# %s:%d" % (name, line))
        if kind == "run against mnemo serve":
            out.append("__start_serve")
        # the trace names the page's line: LINENO counts the script's lines, from 1
        shift = (line + 1) - (len(out) + 3)
        out += ["PS4=%s" % shlex.quote("+ %s:$((LINENO + %d)): " % (name, shift)), "set -x"]
        out += text.split("\n")
        out.append("{ set +x; } 2>/dev/null")
    with open(script, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(len(found))


if __name__ == "__main__":
    main()
