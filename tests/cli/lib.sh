# lib.sh — shared helpers for the end-to-end tests of the `mnemo` command (tests/cli/t*.sh).
# Sourced by each script: . "$TESTS_DIR/cli/lib.sh"
#
# Environment (set by ctest, see tests/CMakeLists.txt):
#   MNEMO           the mnemo binary under test
#   MNEMO_TEST_TMP  a scratch directory; each script works in its own mktemp -d below it
#   TESTS_DIR       the tests/ folder
#   MNEMO_TEST_PG_URL  set in the pg/ variant of each test: the base URL of the PostgreSQL server
#                   the `pg` fixture started (tests/CMakeLists.txt); $DB and new_db then name fresh
#                   databases on it instead of SQLite files
#   MNEMO_TEST_DEADLINE_SCALE  optional whole number (default 1): multiplies every deadline of
#                   wait_until, for machines slower still than a loaded 2-core one
#
# After sourcing:
#   $T        this script's private temp dir (also the current directory, HOME and XDG_* root)
#   $DB       the test's database: a SQLite path inside $T (not created yet), or in the pg/ variant
#             the URL of a fresh, empty PostgreSQL database
#   $OUT $ERR $RC   stdout, stderr and exit status of the last run/ok/fails
#
# Helpers:
#   backend                     prints sqlite or postgres: which backend this run exercises
#   new_db NAME                 prints a new database target: $T/NAME.sqlite, or a fresh database URL
#   sql DBTARGET QUERY          runs QUERY on the database (sqlite3 or psql), prints the rows
#                               (columns separated by |); for checks no public command exposes
#   integrity DBTARGET          prints "ok" when the database passes its backend's own check:
#                               PRAGMA integrity_check (SQLite), pg_amcheck over the heap and
#                               every B-tree index (PostgreSQL); else prints what is wrong
#   mn ARGS...                  "$MNEMO" --db "$DB" ARGS...
#   run CMD...                  runs CMD, records OUT/ERR/RC, never counts
#   ok CMD...                   expects exit 0 (and no sanitizer report); counts one check
#   fails STATUS PATTERN CMD... expects exit STATUS and stderr matching the grep -E PATTERN
#   eq ACTUAL EXPECTED MSG      string equality
#   check MSG CMD...            passes when CMD (a test, a grep, python3 -c …) exits 0
#   pass MSG / fail MSG         count one check by hand
#   jget JSON PYEXPR            prints the python expression PYEXPR evaluated on j = json.loads(JSON)
#   deadline SECONDS            prints SECONDS × MNEMO_TEST_DEADLINE_SCALE
#   wait_until SECONDS WHAT CMD...  polls CMD until it exits 0; after the (scaled) deadline it
#                               fails "gave up after N s waiting for WHAT" and returns 1. Tests
#                               wait on progress this way, never on the clock: the deadline only
#                               bounds a hung test, so keep it generous (60-120 s)
#   alive PID                   true while process PID runs (exists and is not a zombie)
#   finish                      prints "N passed, M failed" and exits non-zero when M > 0
# Every helper reads standard input from /dev/null unless the command redirects it itself.

set -u

: "${MNEMO:?MNEMO must name the mnemo binary}"
: "${MNEMO_TEST_TMP:?MNEMO_TEST_TMP must name a scratch directory}"
: "${TESTS_DIR:?TESTS_DIR must name the tests/ folder}"

case $MNEMO in /*) ;; *) MNEMO=$(cd "$(dirname "$MNEMO")" && pwd)/$(basename "$MNEMO") ;; esac
case $TESTS_DIR in /*) ;; *) TESTS_DIR=$(cd "$TESTS_DIR" && pwd) ;; esac

mkdir -p "$MNEMO_TEST_TMP" || exit 99
T=$(mktemp -d "$MNEMO_TEST_TMP/$(basename "$0" .sh).XXXXXX") || exit 99
T=$(cd "$T" && pwd)
cd "$T" || exit 99

# Never read the user's configuration or data: everything lives under $T.
HOME=$T/home
XDG_CONFIG_HOME=$T/xdg-config
XDG_DATA_HOME=$T/xdg-data
XDG_CACHE_HOME=$T/xdg-cache
XDG_STATE_HOME=$T/xdg-state
export HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME
mkdir -p "$HOME"
# Every MNEMO_* setting of the caller's environment goes (MNEMO_DB, MNEMO_TEST_NOW_MS, …), except
# the variables of the test harness itself.
for _v in $(env | sed -n 's/^\(MNEMO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    case $_v in
    MNEMO_TEST_TMP | MNEMO_CONCURRENCY_N | MNEMO_CRASH_ROUNDS | MNEMO_TEST_PG_URL | MNEMO_TEST_DEADLINE_SCALE) ;;
    *) unset "$_v" ;;
    esac
done
LC_ALL=C.UTF-8
export LC_ALL
# Sanitizer builds: report leaks and UB; a report fails the check through the exit status or
# the stderr scan in `ok`.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

MNEMO_TEST_PG_URL=${MNEMO_TEST_PG_URL:-}
backend() { if [ -n "$MNEMO_TEST_PG_URL" ]; then echo postgres; else echo sqlite; fi; }

# pg_url BASE NAME: BASE (postgresql://USER@/DB?QUERY) with its database name replaced by NAME.
pg_url() { printf '%s\n' "$1" | sed "s|^\([a-z]*://[^/]*\)/[^?]*|\1/$2|"; }

# new_db NAME: a new database target. PostgreSQL: the database mnemo_<script>_<pid>_NAME, dropped
# first if a run that died left it behind.
# (Called in $(…), a subshell: the counter and the list of databases live in files under $T.)
new_db() {
    if [ -z "$MNEMO_TEST_PG_URL" ]; then
        echo "$T/$1.sqlite"
        return
    fi
    _NDB=$(($(cat "$T/.ndb" 2>/dev/null || echo 0) + 1))
    echo "$_NDB" >"$T/.ndb"
    _name=$(printf 'mnemo_%s_%s_%s_%s' "$(basename "$0" .sh | cut -d- -f1)" "$$" "$_NDB" "$1" | tr -c 'a-zA-Z0-9_\n' _ | cut -c1-63)
    psql -X -q -v ON_ERROR_STOP=1 "$MNEMO_TEST_PG_URL" -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $_name" \
        -c "CREATE DATABASE $_name" >/dev/null </dev/null || { echo "lib.sh: cannot create database $_name" >&2; exit 99; }
    echo "$_name" >>"$T/.dbs"
    pg_url "$MNEMO_TEST_PG_URL" "$_name"
}

sql() {
    case $1 in
    postgres://* | postgresql://*) psql -X -q -tA -v ON_ERROR_STOP=1 "$1" -c "$2" </dev/null ;;
    *) sqlite3 "$1" "$2" </dev/null ;;
    esac
}

# pg_as_version_9 TARGET: a PostgreSQL database of today's schema made to look like version 9
# (every later step undone, newest first: src/store/postgres/schema.h; the C tests have the same
# in tests/test_db.h), for the tests of `mnemo upgrade` from an older database.
pg_as_version_9() {
    sql "$1" "DROP TRIGGER sessions_claim ON sessions; DROP FUNCTION mn_session_claim(); DROP TABLE session_ids;
    DROP TABLE session_keys; DROP INDEX sessions_by_id; ALTER TABLE sessions ADD UNIQUE (id);
    DROP INDEX sessions_by_key;
    CREATE UNIQUE INDEX sessions_by_key ON sessions(namespace, key) WHERE key IS NOT NULL;
    CREATE OR REPLACE FUNCTION mn_sessions_gone() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS 'BEGIN DELETE FROM messages m USING gone g WHERE m.session_sid = g.sid;
    RETURN NULL; END'; ALTER TABLE sessions DROP COLUMN title_seq;
    ALTER TABLE sessions DROP COLUMN cleared_from; DROP INDEX sessions_by_key;
    ALTER TABLE sessions DROP COLUMN key; DROP TABLE checkpoint_writes; DROP TABLE checkpoints;
    DROP TABLE documents;
    ALTER TABLE summaries DROP COLUMN n, DROP CONSTRAINT summaries_pkey, ADD PRIMARY KEY (id);
    CREATE INDEX summaries_by_session ON summaries(session_sid, id);
    ALTER TABLE events DROP COLUMN n, DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (id), ALTER COLUMN session_sid DROP NOT NULL;
    CREATE INDEX events_by_session ON events(session_sid, id);
    ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_memory_id_vid_fkey, DROP COLUMN memory_id, ADD PRIMARY KEY (vid);
    DROP INDEX memory_vectors_by_vid;
    ALTER TABLE memories DROP CONSTRAINT memories_pkey, ADD PRIMARY KEY (vid);
    DROP INDEX memories_by_vid;
    ALTER TABLE memory_vectors ADD FOREIGN KEY (vid) REFERENCES memories(vid) ON DELETE CASCADE;
    ALTER TABLE memory_vector_log DROP COLUMN memory_id;
    ALTER TABLE embeddings DROP COLUMN session_sid, ADD PRIMARY KEY (message_id);
    ALTER TABLE embed_queue DROP COLUMN session_sid, ADD PRIMARY KEY (message_id);
    ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (id);
    ALTER TABLE embeddings ADD FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE;
    ALTER TABLE embed_queue ADD FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE;
    CREATE OR REPLACE FUNCTION mn_embed_queue() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN IF NEW.content IS NOT NULL THEN INSERT INTO embed_queue (message_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    END IF; RETURN NULL; END';
    UPDATE mnemo_schema SET version = 9" >/dev/null
}

integrity() {
    case $1 in
    postgres://* | postgresql://*)
        _bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
        if "$_bin/pg_amcheck" --install-missing --heapallindexed "$1" >"$T/.amcheck" 2>&1 </dev/null; then
            echo ok
        else
            cat "$T/.amcheck"
        fi
        ;;
    *) sqlite3 "$1" 'PRAGMA integrity_check' </dev/null ;;
    esac
}

DB=$(new_db db)
OUT=
ERR=
RC=0
PASSED=0
FAILED=0
TEST_NAME=$(basename "$0" .sh)

pass() { PASSED=$((PASSED + 1)); }
fail() {
    FAILED=$((FAILED + 1))
    printf 'FAIL: %s\n' "$*" >&2
}

# Describes the last command for failure messages.
_last() {
    printf '    command: %s\n    exit: %s\n    stdout: %.600s\n    stderr: %.600s\n' "$_CMD" "$RC" "$OUT" "$ERR" >&2
}

mn() { "$MNEMO" --db "$DB" "$@"; }

# run CMD...: records stdout in $OUT, stderr in $ERR, the status in $RC. Standard input is
# /dev/null unless the caller redirects the whole `run` (then it is inherited).
run() {
    _CMD=$*
    "$@" >"$T/.out" 2>"$T/.err"
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    return 0
}

_sanitizer_clean() {
    if grep -Eq 'runtime error:|Sanitizer|LeakSanitizer|ERROR: ' "$T/.err"; then
        fail "sanitizer report from: $_CMD"
        _last
        return 1
    fi
    return 0
}

ok() {
    run "$@"
    if [ "$RC" -eq 0 ] && _sanitizer_clean; then
        pass
        return 0
    fi
    [ "$RC" -eq 0 ] || { fail "expected exit 0: $*"; _last; }
    return 1
}

fails() {
    _want=$1
    _pat=$2
    shift 2
    run "$@"
    if [ "$RC" -ne "$_want" ]; then
        fail "expected exit $_want: $*"
        _last
        return 1
    fi
    if ! grep -Eq -- "$_pat" "$T/.err"; then
        fail "stderr does not match /$_pat/: $*"
        _last
        return 1
    fi
    if grep -Eq 'runtime error:|AddressSanitizer|LeakSanitizer' "$T/.err"; then
        fail "sanitizer report from: $*"
        _last
        return 1
    fi
    pass
    return 0
}

eq() {
    if [ "$1" = "$2" ]; then
        pass
        return 0
    fi
    fail "$3"
    printf '    actual:   %.600s\n    expected: %.600s\n' "$1" "$2" >&2
    return 1
}

check() {
    _msg=$1
    shift
    if "$@"; then
        pass
        return 0
    fi
    fail "$_msg"
    return 1
}

# jget JSON PYEXPR: evaluates PYEXPR with j bound to the parsed JSON; prints str() of the
# result (JSON text for lists, dicts, None and booleans).
jget() {
    printf '%s' "$1" | python3 -c '
import json, sys
j = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogateescape"))
r = eval(sys.argv[1])
print(r if isinstance(r, str) or (isinstance(r, int) and not isinstance(r, bool)) else json.dumps(r, ensure_ascii=False))
' "$2"
}

# A canonical snapshot of the database's observable state: stats (minus file sizes, which a
# read may change through the WAL, and the PostgreSQL database size, which autovacuum and reads
# of the catalog may change) and the full export.
snapshot() {
    {
        "$MNEMO" --db "$1" stats --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
for k in ("db_bytes", "wal_bytes", "bytes_per_message"):
    j.pop(k, None)
print(json.dumps(j, sort_keys=True))'
        "$MNEMO" --db "$1" export
    } 2>&1 </dev/null
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

MNEMO_TEST_DEADLINE_SCALE=${MNEMO_TEST_DEADLINE_SCALE:-1}
case $MNEMO_TEST_DEADLINE_SCALE in
'' | *[!0-9]* | 0) echo "lib.sh: MNEMO_TEST_DEADLINE_SCALE must be a whole number >= 1" >&2; exit 99 ;;
esac
deadline() { echo $(($1 * MNEMO_TEST_DEADLINE_SCALE)); }

alive() { [ -e "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]; }

# wait_until SECONDS WHAT CMD...: the clock is read only to give up, never to decide an outcome.
wait_until() {
    _wu_limit=$(deadline "$1")
    _wu_what=$2
    shift 2
    _wu_end=$(($(date +%s) + _wu_limit))
    while ! "$@"; do
        if [ "$(date +%s)" -ge "$_wu_end" ]; then
            fail "gave up after ${_wu_limit} s waiting for $_wu_what"
            return 1
        fi
        sleep 0.05
    done
    return 0
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    if [ "$FAILED" -gt 0 ]; then
        echo "($TEST_NAME: scratch files kept in $T)" >&2
        exit 1
    fi
    if [ -n "$MNEMO_TEST_PG_URL" ] && [ -f "$T/.dbs" ]; then
        for _d in $(cat "$T/.dbs"); do
            psql -X -q "$MNEMO_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $_d WITH (FORCE)" >/dev/null 2>&1 </dev/null
        done
    fi
    rm -rf "$T"
    exit 0
}

exec </dev/null
