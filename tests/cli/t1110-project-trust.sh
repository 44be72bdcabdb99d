#!/bin/sh
# t1110-project-trust.sh — a project file (.mnemo/config.yaml in the working directory) may
# name only a loopback summariser: look-alike hosts and userinfo tricks are refused.
. "$TESTS_DIR/cli/lib.sh"

ok mn session new
S=$OUT
for i in 1 2 3 4 5 6; do ok mn add "$S" user "question $i about src/f$i.c"; ok mn add "$S" assistant "answer $i"; done
mkdir -p .mnemo
for url in "http://127.0.0.1@example.invalid/" "http://localhost.example.invalid/" "http://127.0.0.1.example.invalid/" \
           "http://example.invalid/?127.0.0.1"; do
    printf 'summarizer:\n  name: llm\n  base_url: "%s"\n  retries: 0\n  timeout_ms: 500\n' "$url" > .mnemo/config.yaml
    run mn compact "$S"
    check "project base_url $url is refused as not loopback" sh -c 'printf "%s%s" "$1" "$2" | grep -q "comes from the project file"' - "$OUT" "$ERR"
done
# a loopback address is allowed from the project file (nothing listens there: a plain failure)
printf 'summarizer:\n  name: llm\n  base_url: "http://127.0.0.1:9/"\n  retries: 0\n  timeout_ms: 500\n' > .mnemo/config.yaml
run mn compact "$S"
check "a loopback base_url from the project file is used" sh -c '! printf "%s%s" "$1" "$2" | grep -q "comes from the project file"' - "$OUT" "$ERR"
rm -rf .mnemo
finish
