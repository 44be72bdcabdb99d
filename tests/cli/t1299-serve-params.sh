#!/bin/sh
# t1299-serve-params.sh — every operation's parameter declarations are enforced on both surfaces:
# for each route of /openapi.json and each tool of MCP tools/list (read live, so new operations are
# covered without editing this test), an unknown parameter is a 400 / JSON-RPC -32602 naming it,
# and each declared limit (integer range, maxLength, enum, type) is refused naming the parameter
# and the limit (tests/cli/serve/params_check.py); docs/http-api.md's table and docs/mcp.md's tool
# table agree with the live table (tests/cli/serve/docs_check.py).
# pg variant: none — parameter declarations checked in the server, before the store.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
run python3 "$TESTS_DIR/cli/serve/params_check.py" "$URL"
printf '%s\n' "$OUT" | grep FAIL | head -40 >&2
eq "$RC" 0 "every operation refuses unknown and out-of-limit parameters ($(printf '%s\n' "$OUT" | tail -n1))"

# the declarations reach the schemas: additionalProperties false, the limits, the new parameters
req GET /openapi.json
eq "$(jget "$OUT" '[j["paths"]["/v1/sessions"]["get"]["parameters"][1]["schema"]["maximum"], sorted(j["paths"]["/v1/sessions/{session_id}/context"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"])]')" \
    '[10000, ["detail", "fold", "format", "max_tokens", "memories", "memories_top_k", "model_window", "no_fold", "rag", "rag_min_similarity", "rag_scope", "rag_top_k", "strategy"]]' \
    "openapi: session list limit is the library's 10000; context declares rag, model_window, no_fold"
# the pages that list operations and parameters by hand agree with the live table
run python3 "$TESTS_DIR/cli/serve/docs_check.py" "$URL" "$TESTS_DIR/../docs"
printf '%s\n' "$OUT" | grep FAIL >&2
eq "$RC" 0 "docs/http-api.md and docs/mcp.md match /openapi.json and tools/list ($(printf '%s\n' "$OUT" | tail -n1))"
serve_stop
finish
