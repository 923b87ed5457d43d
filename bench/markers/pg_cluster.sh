# shellcheck shell=bash
# Sourced by b6.sh: a throwaway PostgreSQL 15 cluster (Debian's postgresql-15)
# for pgbench, run as the `postgres` user. It lives in a directory of its own
# under /tmp and listens only on a unix socket there (listen_addresses=''), so
# it takes no TCP port and no other local user can reach it; pg_cleanup stops
# it and removes the directory (b6.sh calls it on every exit).
#   pg_setup SCALE      initdb, then `pgbench -i -s SCALE` (started and stopped)
#   pg_server_command   the command line that runs the server in the foreground
#   pg_run_server       runs it
#   pg_wait_ready       waits until it accepts connections (10 s at most)
#   pg_stop             fast shutdown, waiting for it
#   pg_bench ARGS...    pgbench ARGS against the cluster's database
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
pg_dir=
pg_port=5432 # names the socket file only: nothing listens on TCP

# From /, which postgres can read (the caller's directory may be private).
pg_as_postgres() { (cd / && exec runuser -u postgres -- "$@"); }

pg_server_command() {
  echo "runuser -u postgres -- $pg_bin/postgres -D $pg_dir/data -p $pg_port -k $pg_dir -c listen_addresses="
}

pg_run_server() { pg_as_postgres "$pg_bin/postgres" -D "$pg_dir/data" -p "$pg_port" -k "$pg_dir" -c listen_addresses=; }

pg_wait_ready() {
  for _ in $(seq 100); do
    pg_as_postgres "$pg_bin/pg_isready" -q -h "$pg_dir" -p "$pg_port" && return 0
    sleep 0.1
  done
  echo "pg_cluster: the server did not accept connections within 10 s; its log:" >&2
  tail -20 "$pg_dir/log" >&2
  return 1
}

pg_stop() {
  [ -f "$pg_dir/data/postmaster.pid" ] || return 0
  pg_as_postgres "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop > /dev/null
}

pg_bench() { pg_as_postgres pgbench -h "$pg_dir" -p "$pg_port" "$@" postgres; }

pg_setup() {
  for tool in "$pg_bin/initdb" "$pg_bin/postgres" "$pg_bin/pg_ctl"; do
    [ -x "$tool" ] || { echo "pg_cluster: $tool not found (Debian package postgresql-15)" >&2; return 1; }
  done
  command -v pgbench > /dev/null || { echo "pg_cluster: pgbench not found (postgresql-client-15)" >&2; return 1; }
  id postgres > /dev/null 2>&1 || { echo "pg_cluster: no postgres user (postgresql-15 creates it)" >&2; return 1; }
  pg_dir=$(mktemp -d /tmp/sonde-pgbench-XXXXXX)
  chown postgres: "$pg_dir"
  pg_as_postgres "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U postgres > "$pg_dir/initdb.log" 2>&1 ||
    { cat "$pg_dir/initdb.log" >&2; return 1; }
  pg_as_postgres "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w \
    -o "-p $pg_port -k $pg_dir -c listen_addresses=" start > /dev/null
  pg_bench -i -q -s "$1" > "$pg_dir/init.log" 2>&1 || { cat "$pg_dir/init.log" >&2; return 1; }
  pg_stop
}

pg_cleanup() {
  [ -n "$pg_dir" ] || return 0
  pg_stop 2> /dev/null || true
  # A server that did not stop: its postmaster, by the pid it wrote.
  if [ -f "$pg_dir/data/postmaster.pid" ]; then
    kill -KILL "$(head -1 "$pg_dir/data/postmaster.pid")" 2> /dev/null || true
    sleep 0.5
  fi
  rm -rf "$pg_dir"
  pg_dir=
}
