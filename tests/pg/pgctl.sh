#!/bin/sh
# pgctl.sh — a throwaway PostgreSQL server for the tests and benchmarks: Debian's postgresql
# package, initdb in a temporary directory, listening only on a Unix socket in that directory.
#
#   pgctl.sh start DIR            creates DIR (must not hold a running server), starts the server,
#                                 prints the base URL (postgresql://postgres@/postgres?host=DIR/sock)
#   pgctl.sh standby PRIMARY DIR  creates DIR with a streaming hot standby of the server started in
#                                 PRIMARY, starts it, waits until it serves read-only queries, prints
#                                 its URL (as start does)
#   pgctl.sh stop DIR             stops it (fast shutdown) and removes DIR
#   pgctl.sh url DIR              prints the URL of a started server
#   pgctl.sh halt DIR             stops the server (fast shutdown) but keeps DIR: its data survives
#   pgctl.sh resume DIR           starts a halted server again on the same socket and data
#
# stop, url, halt and resume work the same on a primary and a standby (a halted standby resumes
# as a standby: pg_basebackup -R left standby.signal and primary_conninfo in its data).
# initdb refuses to run as root, so under root the server runs as the `postgres` system user
# the package creates. fsync stays on: the tests exercise durability.
set -eu

usage="usage: pgctl.sh start|stop|url|halt|resume DIR, or pgctl.sh standby PRIMARY DIR"
cmd=${1:?$usage}
if [ "$cmd" = standby ]; then
    primary=${2:?$usage}
    dir=${3:?$usage}
else
    dir=${2:?$usage}
fi
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bindir" ] || { echo "pgctl: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() { echo "postgresql://postgres@/postgres?host=$dir/sock"; }

# DIR and its socket folder, owned by the user the server runs as
make_dir() {
    mkdir -p "$dir/sock"
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$dir"
    return 0
}

# the standby's max_connections must be at least the primary's: both get the same settings
run_server() {
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 300 \
        -o "-c listen_addresses='' -k $dir/sock -c max_connections=300 -c shared_buffers=128MB" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
}

case $cmd in
start)
    make_dir
    as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    run_server
    url
    ;;
standby)
    make_dir
    # over the primary's socket: initdb -A trust wrote "local replication all trust" in its
    # pg_hba.conf; -R writes standby.signal and primary_conninfo (host=PRIMARY/sock)
    as_owner "$bindir/pg_basebackup" -h "$primary/sock" -U postgres -D "$dir/data" -R -X stream -c fast \
        >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
    # hot_standby is PostgreSQL's default; said here so that the data directory states it, for
    # resume as well. Replication settings otherwise stay at their defaults
    echo "hot_standby = on" >>"$dir/data/postgresql.auto.conf"
    run_server
    # pg_ctl -w returns once the standby accepts connections; check that it serves reads as a
    # standby
    [ "$(as_owner "$bindir/psql" -h "$dir/sock" -U postgres -d postgres -XAtc 'SELECT pg_is_in_recovery()')" = t ] ||
        { echo "pgctl: $dir is not a hot standby" >&2; cat "$dir/server.log" >&2; exit 1; }
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
*) echo "$usage" >&2; exit 2 ;;
esac
