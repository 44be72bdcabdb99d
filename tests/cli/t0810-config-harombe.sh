#!/bin/sh
# t0810-config-harombe.sh — seed 000's configuration works as written: a harombe `memory:`
# section (strategy simple | summarization | hybrid, rag.*, vector_store.*, enabled) through
# --config and the user file; `config show` says what each value became; one precise warning
# per key mnemo does not use; the seed's sentence-transformers provider, which mnemo does not
# have, is refused by name (the mapping to embedder.*: t0130-config-vector-store.sh);
# memory.rag.enabled turns RAG on in built contexts (and --no-rag off).
# pg variant: none — configuration parsing; RAG on PostgreSQL is api/test_search and cli/t1300.
. "$TESTS_DIR/cli/lib.sh"

H=$T/harombe.yaml
# seed 000 §Configuration, as written (phase 2.1 + 2.2)
cat >"$H" <<EOF
memory:
  enabled: true # Enable conversation memory
  storage_path: $DB # SQLite database location
  max_history_tokens: 4096 # Token limit for context
  auto_prune_days: 30 # Auto-delete old sessions
  strategy: simple # simple, summarization, hybrid

  # Vector store configuration
  vector_store:
    enabled: true
    backend: chromadb # Only chromadb supported now
    embedding_model: sentence-transformers/all-MiniLM-L6-v2 # Model to use
    embedding_provider: sentence-transformers # Local embeddings
    persist_directory: ~/.harombe/vectors # Storage directory (null = in-memory)
    collection_name: harombe_embeddings # Collection name

  # RAG configuration
  rag:
    enabled: true
    top_k: 5 # Number of similar messages to retrieve
    min_similarity: 0.7 # Similarity threshold (0.0-1.0)
EOF

# as written, the seed names an embedder mnemo does not have: refused, naming it
fails 1 "harombe.yaml: line 13: memory.vector_store.embedding_provider: 'sentence-transformers' is not an embedder mnemo has" \
    "$MNEMO" --config "$H" config show
# the rest with the provider harombe also has, and vector search off (RAG by keyword, no server)
sed -i 's|embedding_model: sentence-transformers/all-MiniLM-L6-v2|embedding_model: nomic-embed-text|; s|embedding_provider: sentence-transformers|embedding_provider: ollama|' "$H"
sed -i '0,/^    enabled: true$/s//    enabled: false/' "$H"

# the pg/ variant: storage_path is then a URL, which --db would name anyway
SHOW=$("$MNEMO" --config "$H" config show --json 2>/dev/null)
val() { printf '%s\n' "$SHOW" | python3 -c 'import json,sys; e = json.load(sys.stdin)[sys.argv[1]]; print("%s|%s" % (e["value"], e["source"]))' "$1"; }

# --- every command works; config show says what each value became -----------------------------
ok "$MNEMO" --config "$H" config show
HUMAN=$OUT
WARN=$ERR
check "config show (human): strategy window, from 'simple'" sh -c \
    'printf "%s\n" "$1" | grep -Eq "^memory.strategy +window +\(file .*harombe.yaml; from .simple.\)$"' - "$HUMAN"
eq "$(val memory.strategy)" "window|file $H; from 'simple'" "strategy: simple → window"
eq "$(val memory.rag.enabled)" "true|file $H" "rag.enabled is a setting"
eq "$(val memory.rag.top_k)" "5|file $H" "rag.top_k is a setting"
eq "$(val memory.rag.min_similarity)" "0.7|file $H" "rag.min_similarity is a setting"
eq "$(val memory.max_history_tokens)" "4096|file $H" "max_history_tokens"
eq "$(val memory.auto_prune_days)" "30|file $H" "auto_prune_days"
eq "$(val memory.enabled)" "true|file $H" "enabled: true is what mnemo does: no note"
for k in backend persist_directory collection_name; do
    check "config show: vector_store.$k says it is not used and what to do" sh -c \
        'printf "%s\n" "$1" | grep -q "\"memory.vector_store.$2\": {\"value\": \"[^\"]*\", \"source\": \"file [^\"]*; not used: "' - \
        "$(printf '%s\n' "$SHOW" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))')" "$k"
    eq "$(printf '%s\n' "$WARN" | grep -c "memory.vector_store.$k: ")" 1 "one warning for vector_store.$k"
done
check "the backend warning is precise" sh -c 'printf "%s\n" "$1" | grep -q "memory.vector_store.backend: .chromadb. not used: mnemo has no ChromaDB"' - "$WARN"
eq "$(val memory.vector_store.embedding_provider)|$(val embedder.name)" "ollama|file $H|none|default" \
    "vector_store.enabled: false: the provider is not mapped"
check "no key of the seed is unknown" sh -c '! printf "%s\n" "$1" | grep -q "unknown setting"' - "$WARN"

for pair in simple:window summarization:summary hybrid:hybrid; do
    name=${pair%%:*} want=${pair#*:}
    sed "s/strategy: simple/strategy: $name/" "$H" >"$T/h-$name.yaml"
    ok "$MNEMO" --config "$T/h-$name.yaml" session list
    eq "$("$MNEMO" --config "$T/h-$name.yaml" config show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory.strategy"]["value"])')" \
        "$want" "strategy: $name → $want"
done
# the same names through the environment; a misspelt one is still refused by name
eq "$(MNEMO_STRATEGY=summarization "$MNEMO" config show --json | python3 -c 'import json,sys; e=json.load(sys.stdin)["memory.strategy"]; print(e["value"], e["source"])')" \
    "summary env MNEMO_STRATEGY; from 'summarization'" "MNEMO_STRATEGY=summarization → summary"
sed "s/strategy: simple/strategy: simpel/" "$H" >"$T/h-bad.yaml"
fails 1 "memory.strategy: 'simpel' is not one of" "$MNEMO" --config "$T/h-bad.yaml" session list
sed "s/enabled: true # Enable/enabled: false # Enable/" "$H" >"$T/h-off.yaml"
ok "$MNEMO" --config "$T/h-off.yaml" session list
eq "$(printf '%s\n' "$ERR" | grep -c "memory.enabled: 'false' not used: mnemo always stores")" 1 "enabled: false: one warning"
sed "s/min_similarity: 0.7/min_similarity: 1.5/" "$H" >"$T/h-sim.yaml"
fails 1 "memory.rag.min_similarity: '1.5' is not a number from -1 to 1" "$MNEMO" --config "$T/h-sim.yaml" session list
sed "s/enabled: false\$/enabled: maybe/" "$H" >"$T/h-bool.yaml"
fails 1 "'maybe' is not true or false" "$MNEMO" --config "$T/h-bool.yaml" session list

# --- rag.enabled turns RAG on in built contexts, with the seed's defaults ---------------------------
m() { "$MNEMO" --config "$H" --db "$DB" "$@"; }
ok m session new --title past
P=$OUT
ok m add "$P" user "Our staging database listens on port 6543 behind pgbouncer."
ok m add "$P" assistant "Noted: staging postgres is on port 6543."
ok m session new --title now
S=$OUT
ok m add "$S" user "Which port does the staging postgres use?"
ok m context "$S" --rag-scope all --report --json --format text
R=$OUT
check "rag on from the config: the report names the setting" sh -c 'printf "%s\n" "$1" | grep -q "\"source\": *\"memory.rag.enabled\""' - "$R"
check "rag on from the config: top_k 5" sh -c 'printf "%s\n" "$1" | grep -q "\"top_k\": *5"' - "$R"
check "rag on from the config: the past message is injected" sh -c 'printf "%s\n" "$1" | grep -q "RELEVANT CONTEXT FROM PAST CONVERSATIONS"' - "$R"
check "rag on from the config: the port from the other session is there" sh -c 'printf "%s\n" "$1" | grep -q "6543"' - "$R"
ok m context "$S" --rag-scope all --no-rag --report --json --format text
check "--no-rag: nothing injected" sh -c '! printf "%s\n" "$1" | grep -q "RELEVANT CONTEXT\|\"rag\""' - "$OUT"
fails 2 "contradict" m context "$S" --rag --no-rag
# without the file: on by default (the default top_k, 40); MNEMO_RAG=false turns it off
ok "$MNEMO" --db "$DB" context "$S" --rag-scope all --report --json --format text
check "no config: RAG on by default" sh -c 'printf "%s\n" "$1" | grep -q "\"top_k\": *40"' - "$OUT"
run env MNEMO_RAG=false "$MNEMO" --db "$DB" context "$S" --rag-scope all --report --json --format text
check "MNEMO_RAG=false: no RAG" sh -c '! printf "%s\n" "$1" | grep -q "RELEVANT CONTEXT"' - "$OUT"

# --- summarizer.prompt_file from a project file stays inside the project ------------------------------
mkdir -p "$T/proj/.mnemo"
printf 'summarizer:\n  prompt_file: /etc/passwd\n' >"$T/proj/.mnemo/config.yaml"
cd "$T/proj"
run "$MNEMO" config show
eq "$RC" 1 "a project file may not name a prompt file outside the project"
check "… and says why" sh -c 'printf "%s\n" "$1" | grep -q "summarizer.prompt_file comes from the project file"' - "$ERR"
printf 'summarizer:\n  prompt_file: prompts/summary.txt\n' >"$T/proj/.mnemo/config.yaml"
run "$MNEMO" config show
eq "$RC" 0 "a prompt file inside the project is fine"
cd "$T"
# a prompt file that cannot be read says why (a directory read "read error")
S=$(mn session new)
for i in 1 2 3 4 5 6; do mn add "$S" user "question $i" >/dev/null; mn add "$S" assistant "answer $i" >/dev/null; done
mkdir -p "$T/prompt-dir"
MNEMO_SUMMARIZER=llm MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:9 MNEMO_SUMMARIZER_PROMPT_FILE="$T/prompt-dir" \
    fails 1 "summarizer.prompt_file: cannot read '.*prompt-dir': Is a directory" mn compact "$S"

finish
