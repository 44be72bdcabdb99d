#!/bin/sh
# t0800-config.sh — `mnemo config show` (every key with its source), the precedence
# flag > environment > project file > user file > default, --config, bad and unknown keys,
# `version`, --help on every command, and secrets masked in config show.
# pg variant: none — configuration precedence and parsing; the store is the same code on both.
. "$TESTS_DIR/cli/lib.sh"

USERCFG=$XDG_CONFIG_HOME/mnemo/config.yaml
PROJCFG=$T/.mnemo/config.yaml
mkdir -p "$XDG_CONFIG_HOME/mnemo" "$T/.mnemo"

# source KEY [mnemo args…]: prints "value|source" of KEY from config show --json
src() {
    _key=$1
    shift
    "$MNEMO" "$@" config show --json | python3 -c '
import json, sys
e = json.load(sys.stdin)[sys.argv[1]]
print("%s|%s" % (e["value"], e["source"]))' "$_key"
}

# --- defaults: every key listed, each with its source --------------------------------------------
rm -f "$USERCFG" "$PROJCFG"
ok "$MNEMO" config show --json
J=$OUT
check "config show --json parses as an object" python3 -c 'import json,sys; assert isinstance(json.loads(sys.argv[1]), dict)' "$J"
KEYS=$(jget "$J" '" ".join(j.keys())')
for k in memory.storage_path memory.max_history_tokens memory.auto_prune_days memory.strategy \
    memory.durability memory.busy_timeout_ms memory.max_message_bytes tokenizer.name; do
    check "config show --json has $k" sh -c 'printf " %s \n" "$1" | grep -q " $2 "' - "$KEYS" "$k"
done
eq "$(jget "$J" 'all(set(v.keys()) == {"value", "source"} for v in j.values())')" true "each key has value and source"
# (tokenizer.active, when present, is derived: its source says "resolved")
eq "$(jget "$J" 'sorted(set(v["source"] for k, v in j.items() if k != "tokenizer.active"))')" '["default"]' \
    "with no files or env, every source is default"
eq "$(jget "$J" 'j["memory.storage_path"]["value"]')" "$XDG_DATA_HOME/mnemo/memory.db" "default storage path under XDG_DATA_HOME"
eq "$(jget "$J" 'j["memory.max_history_tokens"]["value"]')" 4096 "default max_history_tokens"
ok "$MNEMO" config show
H=$OUT
NKEYS=$(jget "$J" 'len(j)')
eq "$(printf '%s\n' "$H" | grep -c .)" "$NKEYS" "config show prints one line per key"
for k in $KEYS; do
    [ "$k" = tokenizer.active ] && continue
    check "config show lists $k with its source" sh -c 'printf "%s\n" "$1" | grep -Eq "^$2 .*\(default\)$"' - "$H" "$k"
done

# --- precedence -----------------------------------------------------------------------------------
cat >"$USERCFG" <<EOF
memory:
  storage_path: $T/user.db
  max_history_tokens: 1000
  auto_prune_days: 7
  busy_timeout_ms: 1111
tokenizer:
  name: heuristic
EOF
eq "$(src memory.max_history_tokens)" "1000|user file $USERCFG" "user file over default"
eq "$(src memory.storage_path)" "$T/user.db|user file $USERCFG" "user file: storage_path"
eq "$(src memory.strategy)" "window|default" "a key in no file stays default"
cat >"$PROJCFG" <<EOF
memory:
  storage_path: $T/project.db
  max_history_tokens: 2000
  busy_timeout_ms: 2222
EOF
eq "$(src memory.max_history_tokens)" "2000|project file .mnemo/config.yaml" "project file over user file"
eq "$(src memory.auto_prune_days)" "7|user file $USERCFG" "user file still supplies keys the project file lacks"
eq "$(src memory.storage_path)" "$T/project.db|project file .mnemo/config.yaml" "project file: storage_path"
eq "$(MNEMO_MAX_HISTORY_TOKENS=3000 src memory.max_history_tokens)" "3000|env MNEMO_MAX_HISTORY_TOKENS" "environment over project file"
eq "$(MNEMO_DB=$T/env.db src memory.storage_path)" "$T/env.db|env MNEMO_DB" "MNEMO_DB over the files"
eq "$(MNEMO_DB=$T/env.db src memory.storage_path --db "$T/flag.db")" "$T/flag.db|flag --db" "--db flag over MNEMO_DB"
eq "$(MNEMO_DB='' src memory.storage_path)" "$T/project.db|project file .mnemo/config.yaml" "an empty MNEMO_DB is ignored"
ok env MNEMO_BUSY_TIMEOUT_MS=4444 MNEMO_DB="$T/env.db" "$MNEMO" --db "$T/flag.db" config show
H=$OUT
check "config show (human): the flag with its source" sh -c 'printf "%s\n" "$1" | grep -Eq "^memory.storage_path +$2/flag.db +\(flag --db\)$"' - "$H" "$T"
check "config show (human): env with its source" sh -c 'printf "%s\n" "$1" | grep -Eq "^memory.busy_timeout_ms +4444 +\(env MNEMO_BUSY_TIMEOUT_MS\)$"' - "$H"
check "config show (human): project file with its source" sh -c 'printf "%s\n" "$1" | grep -Eq "^memory.max_history_tokens +2000 +\(project file .mnemo/config.yaml\)$"' - "$H"
check "config show (human): user file with its source" sh -c 'printf "%s\n" "$1" | grep -Eq "^memory.auto_prune_days +7 +\(user file $2\)$"' - "$H" "$USERCFG"
check "config show (human): default with its source" sh -c 'printf "%s\n" "$1" | grep -Eq "^memory.strategy +window +\(default\)$"' - "$H"

# the settings take effect: the project file's storage_path is the database actually used
ok "$MNEMO" session new
check "without --db the project file's storage_path is used" test -f "$T/project.db"
ok "$MNEMO" --db "$T/flag.db" session new
check "--db creates its own file" test -f "$T/flag.db"
ok "$MNEMO" stats --json
eq "$(jget "$OUT" 'j["path"]')" "$T/project.db" "stats names the configured database"
# the project file is read from the current directory only
mkdir -p "$T/elsewhere"
eq "$(cd "$T/elsewhere" && src memory.max_history_tokens)" "1000|user file $USERCFG" "the project file is .mnemo/ of the current directory"

# --- --config FILE replaces both files; the environment still applies ------------------------------
cat >"$T/explicit.yaml" <<EOF
memory:
  max_history_tokens: 5000
  durability: normal
EOF
eq "$(src memory.max_history_tokens --config "$T/explicit.yaml")" "5000|file $T/explicit.yaml" "--config file supplies values"
eq "$(src memory.auto_prune_days --config "$T/explicit.yaml")" "0|default" "--config: the user file is not read"
eq "$(src memory.busy_timeout_ms --config "$T/explicit.yaml")" "5000|default" "--config: the project file is not read"
eq "$(src memory.durability --config="$T/explicit.yaml")" "normal|file $T/explicit.yaml" "--config=FILE form"
eq "$(MNEMO_MAX_HISTORY_TOKENS=6000 src memory.max_history_tokens --config "$T/explicit.yaml")" \
    "6000|env MNEMO_MAX_HISTORY_TOKENS" "environment over --config file"
fails 1 "missing.yaml" "$MNEMO" --config "$T/missing.yaml" config show
fails 1 "missing.yaml" "$MNEMO" --config "$T/missing.yaml" --db "$T/flag.db" stats
# a file that opens but cannot be read: the path and the reason too (it said `read error`)
mkdir "$T/config-dir"
fails 1 "^mnemo: config file $T/config-dir: Is a directory\$" "$MNEMO" --config "$T/config-dir" config show
fails 1 "^mnemo: config file $T/config-dir: Is a directory\$" "$MNEMO" --config "$T/config-dir" --db "$T/flag.db" stats

# --- bad values: exit 1 naming file, line and key ---------------------------------------------------
cat >"$T/bad.yaml" <<'EOF'
memory:
  enabled: true
  max_history_tokens: lots
EOF
fails 1 "bad\.yaml.*line 3.*memory\.max_history_tokens" "$MNEMO" --config "$T/bad.yaml" config show
eq "$OUT" "" "a bad config prints no settings"
fails 1 "bad\.yaml.*line 3.*memory\.max_history_tokens" "$MNEMO" --config "$T/bad.yaml" --db "$T/flag.db" stats
printf 'memory:\n  strategy: magic\n' >"$T/bad-enum.yaml"
fails 1 "bad-enum\.yaml.*line 2.*memory\.strategy" "$MNEMO" --config "$T/bad-enum.yaml" config show
printf 'memory:\n\n  durability: sometimes\n' >"$T/bad-enum2.yaml"
fails 1 "bad-enum2\.yaml.*line 3.*memory\.durability" "$MNEMO" --config "$T/bad-enum2.yaml" config show
printf 'memory:\n  max_history_tokens: [1, 2]\n' >"$T/bad-list.yaml"
fails 1 "bad-list\.yaml.*line 2.*memory\.max_history_tokens" "$MNEMO" --config "$T/bad-list.yaml" config show
printf 'memory: [\n  oops\n' >"$T/bad-syntax.yaml"
fails 1 "bad-syntax\.yaml.*line [0-9]+" "$MNEMO" --config "$T/bad-syntax.yaml" config show
cp "$USERCFG" "$T/user.good"
printf 'memory:\n  busy_timeout_ms: -5\n' >"$USERCFG"
fails 1 "$USERCFG.*line 2.*memory\.busy_timeout_ms" "$MNEMO" config show
cp "$T/user.good" "$USERCFG"
cp "$PROJCFG" "$T/project.good"
printf '# comment\nmemory:\n  max_message_bytes: 0\n' >"$PROJCFG"
fails 1 "\.mnemo/config\.yaml.*line 3.*memory\.max_message_bytes" "$MNEMO" config show
# nesting is bounded (64 levels, docs/config.md): 20,000 levels overflowed the stack (status 139),
# in the project file that every command reads too; JSON is YAML's flow style
python3 -c "print('memory: ' + '[' * 20000 + ']' * 20000)" >"$PROJCFG"
fails 1 "\.mnemo/config\.yaml: line 1: nested deeper than 64 levels" "$MNEMO" --db "$T/flag.db" stats
python3 -c "print('memory:\n' + '- ' * 20000 + 'x')" >"$PROJCFG"
fails 1 "\.mnemo/config\.yaml: line 2: nested deeper than 64 levels" "$MNEMO" config show
cp "$T/project.good" "$PROJCFG"
python3 -c "print('{\"memory\": ' + '{\"a\": ' * 63 + '1' + '}' * 64)" >"$T/deep.json"
ok "$MNEMO" --config "$T/deep.json" config show
python3 -c "print('{\"memory\": ' + '{\"a\": ' * 64 + '1' + '}' * 65)" >"$T/deep.json"
fails 1 "deep\.json: line 1: nested deeper than 64 levels" "$MNEMO" --config "$T/deep.json" config show
fails 1 "MNEMO_STRATEGY" env MNEMO_STRATEGY=magic "$MNEMO" config show
fails 1 "MNEMO_MAX_HISTORY_TOKENS" env MNEMO_MAX_HISTORY_TOKENS=-1 "$MNEMO" config show

# --- unknown keys: a warning, not an error ----------------------------------------------------------
cat >"$T/unknown.yaml" <<'EOF'
memory:
  max_history_tokens: 777
  colour: blue
vector_store_typo:
  kind: x
EOF
ok "$MNEMO" --config "$T/unknown.yaml" config show --json
eq "$(jget "$OUT" 'j["memory.max_history_tokens"]["value"]')" 777 "known keys of a file with unknown keys apply"
check "config show warns about the unknown key memory.colour" sh -c 'printf "%s\n" "$1" | grep -q "warning.*memory.colour"' - "$ERR"
check "config show warns about the unknown key vector_store_typo.kind" sh -c 'printf "%s\n" "$1" | grep -q "vector_store_typo"' - "$ERR"
ok "$MNEMO" --config "$T/unknown.yaml" --db "$T/flag.db" stats
check "other commands warn about the unknown key too" sh -c 'printf "%s\n" "$1" | grep -q "warning.*memory.colour"' - "$ERR"
# a setting given twice in one file, or a second YAML document: refused, naming both lines (the
# later one used to win without a word)
printf 'memory:\n  max_history_tokens: 100\n  max_history_tokens: 200\n' >"$T/twice.yaml"
fails 1 "twice.yaml: line 3: memory.max_history_tokens is set twice \(first at line 2\)" \
    "$MNEMO" --config "$T/twice.yaml" config show
printf 'memory:\n  max_history_tokens: 100\n---\nmemory:\n  max_history_tokens: 200\n' >"$T/two-docs.yaml"
fails 1 "two-docs.yaml: line 3: a second YAML document" "$MNEMO" --config "$T/two-docs.yaml" config show
printf -- '---\nmemory:\n  max_history_tokens: 100\n...\n' >"$T/one-doc.yaml"
ok "$MNEMO" --config "$T/one-doc.yaml" config show --json
eq "$(jget "$OUT" 'j["memory.max_history_tokens"]["value"]')" 100 "one document with its markers: read"
# a byte that is not UTF-8 is placed where it is (libyaml gives reader errors as an offset only:
# they all read "line 1 column 1")
printf 'memory:\n  strategy: window\n  max_history_tokens: 1\377\n' >"$T/not-utf8.yaml"
fails 1 "not-utf8.yaml: invalid leading UTF-8 octet at line 3 column 24" "$MNEMO" --config "$T/not-utf8.yaml" config show
# a variable one letter off a setting's: a warning naming the setting (it used to be ignored
# without a word); other MNEMO_ names (the packages', the tests') are not judged
ok env MNEMO_MAX_HISTORY_TOKEN=5 "$MNEMO" --db "$T/flag.db" config show --json
eq "$(jget "$OUT" 'j["memory.max_history_tokens"]["source"].startswith("env")')" false "the misspelt variable sets nothing"
check "it is named, with the setting it looks like" sh -c 'printf "%s\n" "$1" | grep -q "warning: environment: MNEMO_MAX_HISTORY_TOKEN is not a setting and is ignored; did you mean MNEMO_MAX_HISTORY_TOKENS?"' - "$ERR"
ok env MNEMO_BASE_URL=http://127.0.0.1:1 MNEMO_DATADIR=x MNEMO_CI=1 MNEMO_DIR=x "$MNEMO" --db "$T/flag.db" config show --json
eq "$ERR" "" "MNEMO_BASE_URL (the packages'), MNEMO_DATADIR, and short names near none (MNEMO_CI): no warning"
# bool spellings are canonicalised (memory.enabled is the boolean key, when this version has it)
case " $KEYS " in
*" memory.enabled "*)
    printf 'memory:\n  enabled: yes\n' >"$T/bool.yaml"
    eq "$(src memory.enabled --config "$T/bool.yaml")" "true|file $T/bool.yaml" "yes is read as true"
    printf 'memory:\n\n  enabled: perhaps\n' >"$T/bad-bool.yaml"
    fails 1 "bad-bool\.yaml.*line 3.*memory\.enabled" "$MNEMO" --config "$T/bad-bool.yaml" config show
    ;;
esac
printf '' >"$T/empty.yaml"
eq "$(src memory.max_history_tokens --config "$T/empty.yaml")" "4096|default" "an empty config file is fine"

# --- secrets are masked, as in every other output (security finding: config show printed the
# PostgreSQL password of MNEMO_DB). One rule, src/store/target.c's: a URL's password, a keyword
# string's password=, any parameter whose name holds pass, secret or token; and the model servers'
# URLs, and the key hashes of server.api_keys. Text and --json alike.
HASH=$(printf %s sekrit-key | sha256sum | cut -d' ' -f1)
# shown VAR=VALUE KEY: config show --json's value of KEY with VAR set, then the text line's
shown() {
    env "$1" "$MNEMO" config show --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]]["value"])' "$2"
    env "$1" "$MNEMO" config show | sed -n "s/^$2  *\([^ ]*\( [^ (][^ ]*\)*\)  *(.*/\1/p"
}
eq "$(shown MNEMO_DB=postgresql://app:s3cret-pw@db.example/mem memory.storage_path)" \
    "$(printf 'postgresql://app:***@db.example/mem\npostgresql://app:***@db.example/mem')" "a URL's password is masked"
eq "$(shown 'MNEMO_DB=postgres://app@db.example/mem?sslmode=require&password=s3cret-pw' memory.storage_path)" \
    "$(printf 'postgres://app@db.example/mem?sslmode=require&password=***\npostgres://app@db.example/mem?sslmode=require&password=***')" \
    "a URL's password parameter is masked"
eq "$(shown 'MNEMO_DB=host=db.example dbname=mem password=s3cret-pw sslpassword=k3y-pw' memory.storage_path)" \
    "$(printf 'host=db.example dbname=mem password=*** sslpassword=***\nhost=db.example dbname=mem password=*** sslpassword=***')" \
    "a keyword string's passwords are masked"
eq "$(shown MNEMO_SUMMARIZER_BASE_URL=http://me:s3cret-pw@127.0.0.1:9/v1 summarizer.base_url)" \
    "$(printf 'http://me:***@127.0.0.1:9/v1\nhttp://me:***@127.0.0.1:9/v1')" "a model server URL's password is masked"
eq "$(shown 'MNEMO_EMBEDDER_BASE_URL=http://127.0.0.1:9/v1?token=s3cret-pw' embedder.base_url)" \
    "$(printf 'http://127.0.0.1:9/v1?token=***\nhttp://127.0.0.1:9/v1?token=***')" "a model server URL's token is masked"
eq "$(shown "MNEMO_SERVER_API_KEYS=$HASH:alpha, sekrit-key:*" server.api_keys)" \
    "$(printf '***:alpha, ***\n***:alpha, ***')" "server.api_keys: each hash masked, its namespace shown; an entry that is no hash all masked"
ok env MNEMO_DB=postgresql://app:s3cret-pw@db.example/mem MNEMO_SERVER_API_KEYS="$HASH:alpha" "$MNEMO" config show
check "config show: no secret anywhere" sh -c '! printf "%s\n" "$1" | grep -Eq "s3cret|$2"' - "$OUT$ERR" "$HASH"
ok env MNEMO_DB=postgresql://app:s3cret-pw@db.example/mem MNEMO_SERVER_API_KEYS="$HASH:alpha" "$MNEMO" config show --json
check "config show --json: no secret anywhere" sh -c '! printf "%s\n" "$1" | grep -Eq "s3cret|$2"' - "$OUT$ERR" "$HASH"
eq "$(shown MNEMO_DB=/tmp/pass=word.db memory.storage_path)" "$(printf '/tmp/pass=word.db\n/tmp/pass=word.db')" \
    "a SQLite path is shown as it is"

# --- version ------------------------------------------------------------------------------------------
ok "$MNEMO" version
V=$OUT
check "version prints 'mnemo X.Y.Z' ($V)" sh -c 'printf "%s\n" "$1" | grep -Eq "^mnemo [0-9]+\.[0-9]+\.[0-9]+"' - "$V"
ok "$MNEMO" --version
eq "$OUT" "$V" "--version prints the same as version"

# --- --help everywhere --------------------------------------------------------------------------------
ok "$MNEMO" --help
TOP=$OUT
check "mnemo --help prints usage:" sh -c 'printf "%s\n" "$1" | grep -q "^usage:"' - "$TOP"
ok "$MNEMO" -h
eq "$OUT" "$TOP" "-h is --help"
# the command table, from the top-level help: "  NAME [SUB]   summary" lines under "commands:"
CMDS=$(printf '%s\n' "$TOP" | sed -n '/^commands:/,/^$/p' | sed '1d;/^$/d' | sed 's/^  //; s/  .*//')
NCMDS=$(printf '%s\n' "$CMDS" | grep -c .)
check "the help lists the command table ($NCMDS commands)" test "$NCMDS" -ge 14
for c in "session create" "session list" "session get" "session delete" append history "context build" export import prune stats \
    "config show" version demo; do
    check "the command table has '$c'" sh -c 'printf "%s\n" "$1" | grep -qx "$2"' - "$CMDS" "$c"
done
printf '%s\n' "$CMDS" >"$T/cmds.txt"
while IFS= read -r c; do
    # shellcheck disable=SC2086 # "session create" is two words
    ok "$MNEMO" --db "$T/help-never-created/db.sqlite" $c --help
    check "mnemo $c --help prints 'usage: mnemo $c'" sh -c 'printf "%s\n" "$1" | grep -q "^usage: mnemo $2"' - "$OUT" "$c"
done <"$T/cmds.txt"
check "--help never opens the database" test ! -e "$T/help-never-created"
ok "$MNEMO" session --help
check "mnemo session --help prints usage:" sh -c 'printf "%s\n" "$1" | grep -q "^usage:"' - "$OUT"
ok "$MNEMO" config --help
check "mnemo config --help prints usage:" sh -c 'printf "%s\n" "$1" | grep -q "^usage:"' - "$OUT"
ok "$MNEMO" add -h
check "mnemo add -h (its older name) prints usage: mnemo append" sh -c 'printf "%s\n" "$1" | grep -q "^usage: mnemo append"' - "$OUT"
fails 2 "usage" "$MNEMO"

finish
