#!/bin/sh
# t0120-readme.sh — README.md's shell examples run as written: the blocks marked
# `<!-- example: run -->` (tests/cli/readme.py has the convention), in page order in one bash, in
# an empty directory, with the `mnemo` under test first on PATH: the five-minute tour, then the
# curl calls against a `mnemo serve` started as the README starts it (127.0.0.1:8765). Where it
# can, the run gets a network namespace of its own (unshare -n), so that port is free whatever
# else runs on this machine.
# pg variant: none — README's examples, on the default SQLite file as the README writes them.
. "$TESTS_DIR/cli/lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
ok python3 "$TESTS_DIR/cli/readme.py" "$ROOT/README.md" "$T/readme.sh"
check "README.md marks its shell examples (the tour, the REST calls)" [ "$OUT" -ge 2 ]

# own_net CMD...: CMD with only a loopback network of its own, when this machine allows it
own_net() {
    if unshare -n true 2>/dev/null && command -v ip >/dev/null 2>&1; then
        unshare -n sh -c 'ip link set lo up && exec "$@"' - "$@"
    else
        "$@"
    fi
}
mkdir "$T/run"
cd "$T/run"
run own_net env PATH="$(dirname "$MNEMO"):$PATH" bash "$T/readme.sh"
eq "$RC" 0 "README.md's examples run as written" || printf '%s\n' "$ERR" | tail -n 40 >&2
check "no sanitizer report" sh -c '! printf "%s\n" "$1" | grep -Eq "runtime error:|Sanitizer"' - "$ERR"
# what the last REST call printed (curl adds no newline): the context with the message stored
printf '%s' "$OUT" >"$T/out.txt"
check "the REST example's context has its message" python3 -c '
import json, sys
text, dec, pos, last = open(sys.argv[1]).read(), json.JSONDecoder(), 0, None
while True:  # the last JSON value of the output
    i = text.find("{", pos)
    if i < 0:
        break
    try:
        last, pos = dec.raw_decode(text, i)
    except ValueError:
        pos = i + 1
assert [m["content"] for m in last["messages"]] == ["Be brief.", "hi"], last
' "$T/out.txt"
cd "$T"
finish
