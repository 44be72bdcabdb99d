#!/bin/sh
# t0121-install-deps.sh — `make run` installs only what building and running need, `make test` the
# test toolchain too: scripts/install-deps run|test on a machine where no package is installed
# (dpkg-query and apt-get are stand-ins that record what would be installed; nothing is).
# pg variant: none — package installation, no database.
. "$TESTS_DIR/cli/lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
eq "$(make -s -n -C "$ROOT" run | head -n 1)" "scripts/install-deps run" "make run installs the run set"
eq "$(make -s -n -C "$ROOT" test | head -n 1)" "scripts/install-deps test" "make test installs the test set"

# a copy without fetch-ranks beside it (that one would download), and stand-ins on PATH
mkdir -p "$T/scripts" "$T/bin"
cp "$ROOT/scripts/install-deps" "$T/scripts/"
printf '#!/bin/sh\nexit 1\n' >"$T/bin/dpkg-query"
printf '#!/bin/sh\n[ "$1" = install ] && shift 4 && echo "$@" >>"%s"\nexit 0\n' "$T/installed" >"$T/bin/apt-get"
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo" # when not root
chmod +x "$T/bin/dpkg-query" "$T/bin/apt-get" "$T/bin/sudo"
# no node, so that nodejs and npm count as missing (a machine with node skips them)
mkdir "$T/nonode"
for tool in sh sed grep id echo cat dirname; do ln -s "$(command -v $tool)" "$T/nonode/$tool"; done
deps() { rm -f "$T/installed"; run env PATH="$T/bin:$T/nonode" "$T/scripts/install-deps" "$@"; }

deps run
eq "$RC" 0 "install-deps run"
RUNSET=$(cat "$T/installed")
for p in build-essential cmake pkg-config libsqlite3-dev libjansson-dev libyaml-dev libssl-dev libcurl4-openssl-dev \
    libmicrohttpd-dev libreadline-dev libpq-dev curl jq; do
    check "run installs $p" sh -c 'printf " %s \n" "$1" | grep -q " $2 "' - "$RUNSET" "$p"
done
for p in clang libclang-rt-14-dev libcmocka-dev postgresql chromium nodejs npm tmux python3-pytest python3-venv; do
    check "run does not install $p" sh -c '! printf " %s \n" "$1" | grep -q " $2 "' - "$RUNSET" "$p"
done

deps test
eq "$RC" 0 "install-deps test"
TESTSET=$(cat "$T/installed")
for p in build-essential libpq-dev jq clang libclang-rt-14-dev libcmocka-dev sqlite3 postgresql chromium nodejs npm tmux \
    iproute2 python3-venv python3-pip python3-setuptools python3-pytest; do
    check "test installs $p" sh -c 'printf " %s \n" "$1" | grep -q " $2 "' - "$TESTSET" "$p"
done
deps
eq "$(cat "$T/installed")" "$TESTSET" "no argument: the test set (as before)"
fails 2 "usage: install-deps \[run\|test\]" env PATH="$T/bin:$T/nonode" "$T/scripts/install-deps" everything

finish
