#!/bin/sh
# t0430-export-out.sh — `mnemo export --out FILE`: a missing or empty file name is a usage error
# before anything is done; an existing file keeps its mode when the export replaces it; --out
# naming one of the database's own files (however it is spelled) is refused and the database
# stays whole.
. "$TESTS_DIR/cli/lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER

mode() { stat -c %a "$1"; }

ok mn session new --title kept
S=$OUT
ok mn add "$S" user "a message that must survive"

# A missing or empty value: exit 2, nothing written (the old run exported and failed at rename).
fails 2 "--out needs" mn export --out ""
fails 2 "--out needs" mn export --out=
fails 2 "needs a value" mn export --out
check "no temporary file is left behind" sh -c '! ls -a "$1" | grep -q "[.]tmp[.]"' - "$T"

# An existing file's mode is kept (a 0600 file became 0644: the temporary file had the umask's).
echo secret >"$T/private.jsonl"
chmod 600 "$T/private.jsonl"
ok mn export --out "$T/private.jsonl"
eq "$(mode "$T/private.jsonl")" 600 "a 0600 file stays 0600"
eq "$(head -c 29 "$T/private.jsonl")" '{"format":"mnemo-export","ver' "and holds the export"
echo old >"$T/shared.jsonl"
chmod 640 "$T/shared.jsonl"
ok mn export --out "$T/shared.jsonl"
eq "$(mode "$T/shared.jsonl")" 640 "a 0640 file stays 0640"
ok sh -c 'umask 077 && "$1" --db "$2" export --out "$3"' - "$MNEMO" "$DB" "$T/new.jsonl"
eq "$(mode "$T/new.jsonl")" 600 "a new file takes the umask's mode"

# --out naming the open database (a SQLite file in both variants): refused, whatever the spelling.
SELF=$T/self.sqlite
ok "$MNEMO" --db "$SELF" session new --title self
SID=$OUT
ok "$MNEMO" --db "$SELF" add "$SID" user "still here"
SELF_SHA=$(sha256 "$SELF")
fails 1 "is the database" "$MNEMO" --db "$SELF" export --out "$SELF"
fails 1 "is the database" env MNEMO_DB="$SELF" sh -c 'cd "$1" && "$2" export --out ./self.sqlite' - "$T" "$MNEMO"
ln -s self.sqlite "$T/self-link"
ln "$SELF" "$T/self-hardlink"
fails 1 "is the database" "$MNEMO" --db "$SELF" export --out "$T/self-link"
fails 1 "is the database" "$MNEMO" --db "$SELF" export --out "$T/self-hardlink"
fails 1 "is the database" "$MNEMO" --db "$SELF" export --out "$SELF.keywords"
fails 1 "is the database" "$MNEMO" --db "$SELF" export --out "$SELF-wal"
eq "$(sha256 "$SELF")" "$SELF_SHA" "the database file is unchanged"
check "the link is still a link" test -L "$T/self-link"
ok "$MNEMO" --db "$SELF" history "$SID" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["still here"]' "the database still reads"
check "no temporary file is left behind" sh -c '! ls -a "$1" | grep -q "[.]tmp[.]"' - "$T"
finish
