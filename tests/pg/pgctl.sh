#!/bin/sh
# pgctl.sh — a throwaway PostgreSQL server for the tests and benchmarks: Debian's postgresql
# package, initdb in a temporary directory, listening only on a Unix socket in that directory.
#
#   pgctl.sh start DIR   creates DIR (must not hold a running server), starts the server, prints
#                        the base URL (postgresql://postgres@/postgres?host=DIR/sock)
#   pgctl.sh stop DIR    stops it (fast shutdown) and removes DIR
#   pgctl.sh url DIR     prints the URL of a started server
#   pgctl.sh halt DIR    stops the server (fast shutdown) but keeps DIR: its data survives
#   pgctl.sh resume DIR  starts a halted server again on the same socket and data
#
# initdb refuses to run as root, so under root the server runs as the `postgres` system user
# the package creates. fsync stays on: the tests exercise durability.
set -eu

cmd=${1:?usage: pgctl.sh start|stop|url|halt|resume DIR}
dir=${2:?usage: pgctl.sh start|stop|url|halt|resume DIR}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bindir" ] || { echo "pgctl: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() { echo "postgresql://postgres@/postgres?host=$dir/sock"; }

run_server() {
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 300 \
        -o "-c listen_addresses='' -k $dir/sock -c max_connections=300 -c shared_buffers=128MB" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
}

case $cmd in
start)
    mkdir -p "$dir/sock"
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    run_server
    url
    ;;
halt)
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 300 stop >/dev/null
    ;;
resume)
    run_server
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 300 stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
url) url ;;
*) echo "usage: pgctl.sh start|stop|url|halt|resume DIR" >&2; exit 2 ;;
esac
