#!/bin/sh
# t0130-config-vector-store.sh — harombe's `memory.vector_store` (seed 000) chooses mnemo's
# embedder: embedding_provider ollama|openai and embedding_model become embedder.name and
# embedder.model (ollama at harombe's default host; `config show` says where each came from), and
# semantic search then uses that embedder; a provider mnemo does not have fails naming the key,
# value and line; explicit embedder.* settings win. docs/config.md, "Harombe configuration files".
. "$TESTS_DIR/cli/lib.sh"

harombe() { # harombe.yaml with the given provider and model
    cat <<EOF
memory:
  storage_path: $DB
  strategy: simple
  vector_store:
    enabled: true
    backend: chromadb
    embedding_provider: $1 # the seed's example has sentence-transformers
    embedding_model: $2
    persist_directory: ~/.harombe/vectors
EOF
}
show() { "$MNEMO" --config "$1" config show --json 2>"$T/show.err"; }
val() { printf '%s\n' "$1" | python3 -c 'import json,sys; e = json.load(sys.stdin)[sys.argv[1]]; print("%s|%s" % (e["value"], e["source"]))' "$2"; }

H=$T/harombe.yaml
harombe ollama nomic-embed-text >"$H"
SHOW=$(show "$H")
eq "$(val "$SHOW" embedder.name)" "ollama|file $H; from memory.vector_store.embedding_provider" \
    "embedding_provider: ollama → embedder.name ollama"
eq "$(val "$SHOW" embedder.model)" "nomic-embed-text|file $H; from memory.vector_store.embedding_model" \
    "embedding_model → embedder.model"
eq "$(val "$SHOW" embedder.base_url)" "http://localhost:11434|file $H; from memory.vector_store.embedding_provider" \
    "ollama: harombe's default Ollama host"
eq "$(val "$SHOW" memory.vector_store.embedding_provider)" "ollama|file $H" "the provider is used: no note"
check "no warning about the keys that are used" sh -c '! grep -q "embedding_provider\|embedding_model\|vector_store.enabled" "$1"' - "$T/show.err"
check "the keys mnemo has no use for still say so" grep -q "memory.vector_store.backend: 'chromadb' not used" "$T/show.err"
ok "$MNEMO" --config "$H" config show
check "config show (human): embedder.name says where it came from" sh -c \
    'printf "%s\n" "$1" | grep -Eq "^embedder.name +ollama +\(file .*harombe.yaml; from memory.vector_store.embedding_provider\)$"' - "$OUT"

harombe openai text-embedding-3-small >"$T/openai.yaml"
SHOW=$(show "$T/openai.yaml")
eq "$(val "$SHOW" embedder.name)|$(val "$SHOW" embedder.model)" \
    "openai|file $T/openai.yaml; from memory.vector_store.embedding_provider|text-embedding-3-small|file $T/openai.yaml; from memory.vector_store.embedding_model" \
    "embedding_provider: openai → the openai embedder"

# --- a provider mnemo does not have is an error, not a warning -----------------------------------
harombe sentence-transformers sentence-transformers/all-MiniLM-L6-v2 >"$T/st.yaml"
fails 1 "st.yaml: line 7: memory.vector_store.embedding_provider: 'sentence-transformers' is not an embedder mnemo has" \
    "$MNEMO" --config "$T/st.yaml" config show
fails 1 "embedding_provider: 'sentence-transformers'" "$MNEMO" --config "$T/st.yaml" session list
run env MNEMO_VECTOR_STORE_EMBEDDING_PROVIDER=cohere "$MNEMO" --db "$DB" config show
eq "$RC" 1 "an unknown provider from the environment fails too"
check "… naming the variable and the value" sh -c 'printf "%s\n" "$1" | grep -q "MNEMO_VECTOR_STORE_EMBEDDING_PROVIDER: memory.vector_store.embedding_provider: .cohere."' - "$ERR"
# enabled: false turns the mapping off; an explicit embedder.name makes the provider unused
sed 's/enabled: true/enabled: false/' "$T/st.yaml" >"$T/st-off.yaml"
SHOW=$(show "$T/st-off.yaml")
eq "$(val "$SHOW" embedder.name)" "none|default" "vector_store.enabled: false: no embedder from it"
eq "$(MNEMO_EMBEDDER=hash show "$T/st.yaml" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["embedder.name"]["value"], j["embedder.model"]["value"] or "-")')" \
    "hash -" "MNEMO_EMBEDDER=hash: the explicit setting wins, and the provider is not used"

# --- explicit settings win over the mapped ones ---------------------------------------------------
SHOW=$(MNEMO_EMBEDDER_MODEL=all-minilm show "$H")
eq "$(val "$SHOW" embedder.name)|$(val "$SHOW" embedder.model)" \
    "ollama|file $H; from memory.vector_store.embedding_provider|all-minilm|env MNEMO_EMBEDDER_MODEL" \
    "MNEMO_EMBEDDER_MODEL wins over embedding_model"
SHOW=$(MNEMO_EMBEDDER=hash show "$H")
eq "$(val "$SHOW" embedder.name)|$(val "$SHOW" embedder.model)" "hash|env MNEMO_EMBEDDER||default" \
    "MNEMO_EMBEDDER wins over embedding_provider, and the provider's model goes with it"

# --- semantic search uses the Ollama embedder the harombe file names --------------------------------
node "$TESTS_DIR/fake_llm/fake_embed.js" >"$T/embed.out" 2>"$T/embed.err" &
EPID=$!
wait_until 60 "the fake embedder's port" grep -q '^PORT ' "$T/embed.out"
EURL=http://127.0.0.1:$(sed -n 's/^PORT //p' "$T/embed.out")
harombe ollama ok >"$H" # fake_embed.js: model "ok" embeds deterministically
export MNEMO_EMBEDDER_BASE_URL=$EURL
m() { "$MNEMO" --config "$H" "$@"; }
ok m session new
S=$OUT
ok m add "$S" user "zebra crossings near the station"
ok m add "$S" assistant "unrelated words about lunch"
ok m embed --pending --json
eq "$(jget "$OUT" 'j["embedded"]')" 2 "both messages embedded by the mapped embedder"
ok m search "zebra crossings near the station" --mode semantic --json
eq "$(jget "$OUT" 'j[0]["message"]["content"]')" "zebra crossings near the station" "semantic search finds it"
STATS=$(curl -s "$EURL/stats")
check "the fake Ollama server embedded with the model from embedding_model" sh -c \
    '[ "$(printf "%s" "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)[\"requests\"].get(\"ok\", 0))")" -ge 2 ]' - "$STATS"
kill "$EPID" 2>/dev/null
wait "$EPID" 2>/dev/null

finish
