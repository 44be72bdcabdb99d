#!/bin/sh
# t1297-serve-parity.sh — every operation that has a CLI command gives the same result through the
# CLI, REST and MCP on one database (tests/cli/serve/parity.py: one row per operation; ids and
# timestamps normalised). Fails too when an operation bound to a command has no row.
# pg variant: none — it compares the CLI, REST and MCP over one database; the operations' results
# on PostgreSQL are pg/cli/t1800-parity's and pg/api/test_parity's.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
run python3 "$TESTS_DIR/cli/serve/parity.py" "$MNEMO" "$DB" "$URL"
printf '%s\n' "$OUT" | grep -A2 FAIL | head -60 >&2
eq "$RC" 0 "CLI, REST and MCP agree on every operation ($(printf '%s\n' "$OUT" | tail -n1))"
serve_stop
finish
