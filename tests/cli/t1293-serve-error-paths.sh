#!/bin/sh
# t1293-serve-error-paths.sh — a server-side failure (5xx) never tells the client where the
# server keeps its files (issue #13): the message's paths become "<path>", the full message goes
# to the server's log. Made deterministic with an llm summariser whose prompt file is missing:
# compact answers 503 and the library's message names that file.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

SECRET_DIR="$T/where-the-data-lives"
MNEMO_SUMMARIZER=llm MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:9 \
    MNEMO_SUMMARIZER_PROMPT_FILE="$SECRET_DIR/prompt.txt" serve_start
req POST /v1/sessions '{}'
S=$(jget "$OUT" 'j["session"]["id"]')
for i in 1 2 3 4 5; do
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"question $i\"}"
    req POST "/v1/sessions/$S/messages" "{\"role\":\"assistant\",\"content\":\"answer $i\"}"
done
req POST "/v1/sessions/$S/compact" '{}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "503 unavailable" "compact with an unreadable prompt file: 503"
check "the message says what failed" sh -c 'printf "%s" "$1" | grep -q "prompt_file"' - "$OUT"
check "the message hides the server's path" sh -c 'printf "%s" "$1" | grep -q "<path>" && ! printf "%s" "$1" | grep -q where-the-data-lives' - "$OUT"
serve_stop
finish
