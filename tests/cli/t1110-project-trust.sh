#!/bin/sh
# t1110-project-trust.sh — a project file (.mnemo/config.yaml in the working directory) may
# name only a loopback model server (summariser or embedder) and no API-key variable:
# look-alike hosts and userinfo tricks are refused; MNEMO_TRUST_PROJECT_CONFIG=1 lifts it.
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
# the embedder is held to the same rule, and so are API-key variables
printf 'embedder:\n  name: openai\n  base_url: "http://192.0.2.1:9"\n' > .mnemo/config.yaml
fails 1 "comes from the project file" mn search "anything"
printf 'embedder:\n  api_key_env: HOME\n' > .mnemo/config.yaml
fails 1 "embedder.api_key_env comes from the project file" mn stats
printf 'summarizer:\n  api_key_env: OPENAI_API_KEY\n' > .mnemo/config.yaml
fails 1 "summarizer.api_key_env comes from the project file" mn config show
# an explicit trust flag accepts the project's choices
run env MNEMO_TRUST_PROJECT_CONFIG=1 "$MNEMO" --db "$DB" config show
eq "$RC" 0 "MNEMO_TRUST_PROJECT_CONFIG=1 trusts the project file"
check "the trusted value is in effect" sh -c 'printf "%s" "$1" | grep -q "summarizer.api_key_env .*OPENAI_API_KEY .*project file"' - "$OUT"
# the same settings from the user file are fine
rm -rf .mnemo
mkdir -p "$XDG_CONFIG_HOME/mnemo"
printf 'embedder:\n  api_key_env: HOME\n  base_url: "http://192.0.2.1:9"\n' > "$XDG_CONFIG_HOME/mnemo/config.yaml"
ok mn config show
rm -f "$XDG_CONFIG_HOME/mnemo/config.yaml"
finish
