#!/bin/sh
# commits.sh — commit subjects of at most 72 characters (issue #40: "from now on"), checked for
# every commit since the one that added this file, so that older history is left as it was.
# Usage: commits.sh SOURCE_DIR
set -eu
cd "${1:-.}"
SINCE=$(git log --format=%H --diff-filter=A -- tests/lint/commits.sh 2>/dev/null | tail -n 1)
RANGE="$SINCE^..HEAD"
if [ -z "$SINCE" ] || ! git rev-parse --verify -q "$SINCE^" >/dev/null; then
    RANGE="-1 HEAD"  # not committed yet, or a shallow clone: the newest commit only
fi
long=$(git log --format=%s $RANGE | awk 'length($0) > 72')
if [ -n "$long" ]; then
    printf 'commit subjects over 72 characters:\n%s\n' "$long"
    exit 1
fi
echo "ok: $(git log --format=%s $RANGE | wc -l) commit subjects of at most 72 characters"
