#!/bin/sh
# typing.sh — the Python package as a type checker sees it (issue #40: AsyncMemory's coroutines
# were added with setattr, invisible to mypy). Checks that python/mnemo/aio.pyi is what
# scripts/gen-aio-stub writes from memory.py, that Debian's mypy passes the package, and that
# it sees AsyncMemory's methods and their result types in a user's code (typing_sample.py):
# accepted as written, refused with a wrong annotation added.
# Usage: typing.sh SOURCE_DIR
set -eu
SRC=${1:?SOURCE_DIR}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
mypy() { MYPYPATH="$SRC/python" "$PY" -m mypy --cache-dir "$T/cache" --no-error-summary "$@"; }

"$PY" "$SRC/scripts/gen-aio-stub" "$T/aio.pyi"
if ! diff -u "$SRC/python/mnemo/aio.pyi" "$T/aio.pyi"; then
    echo "FAIL: python/mnemo/aio.pyi is stale: run scripts/gen-aio-stub"; fail=1
fi
(cd "$SRC/python" && mypy -p mnemo) || { echo "FAIL: mypy -p mnemo"; fail=1; }
cp "$SRC/tests/python/typing_sample.py" "$T/sample.py"
mypy "$T/sample.py" || { echo "FAIL: mypy refuses typing_sample.py"; fail=1; }
# The same code with a wrong annotation: mypy must know what create_session returns.
sed 's/^        s = await mem.create_session/        s: int = await mem.create_session/' "$T/sample.py" >"$T/wrong.py"
if out=$(mypy "$T/wrong.py"); then
    echo "FAIL: mypy accepts an int annotation for AsyncMemory.create_session's result"; fail=1
elif ! printf '%s\n' "$out" | grep -q 'Dict\[str, Any\]'; then
    echo "FAIL: mypy's complaint does not name the result type:"; printf '%s\n' "$out"; fail=1
fi
[ "$fail" = 0 ] && echo "ok: aio.pyi current; mypy passes the package and sees AsyncMemory's types"
exit "$fail"
