#!/bin/sh
# t0111-names.sh — one name per operation (docs/names.md): for every operation of the table, the
# C function (or the exception the page states), the MCP tool, the command, the Python method and
# the TypeScript method exist under its name, and every older name the page lists (REST/MCP,
# command words, Python methods, TypeScript methods) still reaches the same operation.
# pg variant: none — names and help text, no store behaviour.
. "$TESTS_DIR/cli/lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
# the TypeScript client's methods, generated from this build's /openapi.json as npm run build does
mkdir -p "$T/js/scripts" "$T/js/src"
cp "$ROOT/js/scripts/generate.mjs" "$T/js/scripts/"
ok env MNEMO="$MNEMO" node "$T/js/scripts/generate.mjs"

for surface in table c mcp cli python ts; do
    check "docs/names.md: $surface" python3 "$TESTS_DIR/cli/names.py" "$surface" "$ROOT" "$MNEMO" \
        "$T/js/src/generated.ts" "$T"
done
finish
