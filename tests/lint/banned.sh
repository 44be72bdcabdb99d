#!/bin/sh
# Every C source of the library and the front ends includes util/banned.h (library) or
# checks for banned calls here (front ends), so strcpy, sprintf, atoi, gmtime… never creep in.
set -eu
root=$1
fail=0
for f in $(find "$root/src" -name '*.c'); do
    grep -q '#include "util/banned.h"' "$f" || { echo "missing banned.h include: $f"; fail=1; }
done
if grep -nE '\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|gmtime|localtime)\(' \
        $(find "$root/app" "$root/src" -name '*.c') | grep -v 'snprintf\|_r(' ; then
    echo "banned function used (see src/util/banned.h)"; fail=1
fi
[ $fail -eq 0 ] && echo "1 passed, 0 failed"
exit $fail
