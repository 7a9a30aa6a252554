#!/usr/bin/env bash
# Starts and stops a throwaway PostgreSQL or MariaDB server from Debian's packages, for the tests
# that run JdbcLockFence on a real database (DatabaseServerExtension in zk-lock-spring).
#
#   scripts/database-server.sh start <postgres|mariadb> <dir> <port>
#   scripts/database-server.sh stop  <postgres|mariadb> <dir>
#
# start installs the server package when its binaries are missing (apt-get, non-interactive),
# creates a system user of its own (zklock-pg, zklock-mariadb: PostgreSQL refuses to run as root),
# initialises a data directory in <dir>/data owned by that user (kept for the next start), starts
# the server on 127.0.0.1:<port> with its socket, pid file and log in <dir>, waits until it accepts
# connections, and creates the user zklock (password zklock) allowed to create databases. A server
# still running in <dir> from an earlier start is stopped first. stop shuts the server down and
# waits for it; stopping a server that does not run succeeds.
#
# The servers are for tests only: PostgreSQL trusts every connection from the loopback address and
# neither server syncs its writes to disk.
#
# Exit codes: 0 done; 3 the server cannot be installed or run here (not root, no apt-get, the
# package cannot be installed), with one line on stderr saying why; any other code a failure.
# Every wait is bounded (START_TIMEOUT, STOP_TIMEOUT seconds; apt waits up to APT_LOCK_TIMEOUT for
# another apt run to finish).
set -euo pipefail

readonly START_TIMEOUT="${START_TIMEOUT:-60}"
readonly STOP_TIMEOUT="${STOP_TIMEOUT:-60}"
readonly APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-300}"
readonly PROGRAM="${0##*/}"

usage() {
	echo "usage: $PROGRAM start <postgres|mariadb> <dir> <port> | stop <postgres|mariadb> <dir>" >&2
	exit 2
}

# fail, unavailable, log and install_package.
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

ensure_user() {
	local user="$1"
	if ! id -u "$user" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user" \
			|| fail "cannot create the system user $user"
		log "created the system user $user"
	fi
}

# Runs a command as the server's user, from a directory that user may enter.
as_owner() {
	(cd "$dir" && runuser -u "$owner" -- "$@")
}

# Makes <dir>/<name> a directory owned by the server's user.
owned_dir() {
	mkdir -p "$dir/$1"
	chown "$owner:" "$dir/$1"
	chmod 700 "$dir/$1"
}

# The first line of a log that reports an error, else its last line.
first_error() {
	grep -m 1 -i -E 'error|fatal' "$1" || tail -n 1 "$1"
}

# Whether a process runs (an exited child of this script that was not reaped yet does not).
alive() {
	[[ -n "$1" && -r "/proc/$1/stat" ]] || return 1
	local state
	state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d ' ' -f 1)"
	[[ -n "$state" && "$state" != Z ]]
}

pid_from() {
	[[ -f "$1" ]] && head -n 1 "$1" | tr -dc '0-9' || true
}

# Waits until a process is gone; false when it is still there after the timeout.
wait_gone() {
	local pid="$1" deadline=$((SECONDS + STOP_TIMEOUT))
	while alive "$pid"; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# --- PostgreSQL --------------------------------------------------------------------------------

postgres_bin() {
	local bin
	for bin in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x "$bin/postgres" && -x "$bin/initdb" && -x "$bin/pg_ctl" ]]; then
			echo "$bin"
			return
		fi
	done
}

postgres_start() {
	pg_bin="$(postgres_bin)"
	if [[ -z "$pg_bin" ]]; then
		install_package postgresql "$dir/apt-get.log"
		pg_bin="$(postgres_bin)"
		[[ -n "$pg_bin" ]] || unavailable "postgresql is installed but no /usr/lib/postgresql/*/bin has postgres and initdb"
	fi
	owner=zklock-pg
	ensure_user "$owner"
	owned_dir data
	owned_dir run
	touch "$dir/postgres.log"
	chown "$owner:" "$dir/postgres.log"
	postgres_stop
	if [[ ! -f "$dir/data/PG_VERSION" ]]; then
		log "initialising $dir/data with $pg_bin/initdb"
		as_owner "$pg_bin/initdb" --pgdata="$dir/data" --username=postgres --auth-local=trust --auth-host=trust \
			--encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
			|| fail "initdb failed: $(first_error "$dir/initdb.log")"
	fi
	log "starting PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
	# -w: pg_ctl waits until the server accepts connections, at most -t seconds.
	as_owner "$pg_bin/pg_ctl" --pgdata="$dir/data" --log="$dir/postgres.log" --wait --timeout="$START_TIMEOUT" \
		--options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/run -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >/dev/null || fail "PostgreSQL did not start within $START_TIMEOUT s: $(tail -n 3 "$dir/postgres.log")"
	"$pg_bin/psql" --no-psqlrc --quiet -v ON_ERROR_STOP=1 --host="$dir/run" --port="$port" --username=postgres \
		--dbname=postgres --command="DO \$\$ BEGIN
			IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'zklock') THEN
				CREATE ROLE zklock LOGIN CREATEDB PASSWORD 'zklock';
			END IF;
		END \$\$" >/dev/null || fail "cannot create the user zklock"
	PGPASSWORD=zklock "$pg_bin/psql" --no-psqlrc --quiet --tuples-only -v ON_ERROR_STOP=1 --host=127.0.0.1 \
		--port="$port" --username=zklock --dbname=postgres --command="SELECT 1" >/dev/null \
		|| fail "PostgreSQL does not accept zklock on 127.0.0.1:$port"
	log "PostgreSQL accepts connections on 127.0.0.1:$port (user zklock)"
}

postgres_stop() {
	pg_bin="${pg_bin:-$(postgres_bin)}"
	local pid
	pid="$(pid_from "$dir/data/postmaster.pid")"
	if ! alive "$pid"; then
		return 0
	fi
	log "stopping PostgreSQL (pid $pid)"
	# Fast shutdown rolls back open transactions; immediate if that does not end in time.
	if ! as_owner "$pg_bin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait --timeout="$STOP_TIMEOUT" stop >/dev/null; then
		as_owner "$pg_bin/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait --timeout="$STOP_TIMEOUT" stop >/dev/null \
			|| fail "PostgreSQL (pid $pid) did not stop within $((2 * STOP_TIMEOUT)) s"
	fi
	wait_gone "$pid" || fail "PostgreSQL (pid $pid) did not exit"
}

# --- MariaDB -----------------------------------------------------------------------------------

mariadb_start() {
	if ! command -v mariadbd >/dev/null || ! command -v mariadb-install-db >/dev/null \
			|| ! command -v mariadb >/dev/null; then
		install_package mariadb-server "$dir/apt-get.log"
		command -v mariadbd >/dev/null || unavailable "mariadb-server is installed but mariadbd is not on the PATH"
	fi
	owner=zklock-mariadb
	ensure_user "$owner"
	owned_dir data
	owned_dir run
	touch "$dir/mariadb.log"
	chown "$owner:" "$dir/mariadb.log"
	mariadb_stop
	if [[ ! -d "$dir/data/mysql" ]]; then
		log "initialising $dir/data with mariadb-install-db"
		# root@localhost authenticates by its unix socket: this script (root) administers the server.
		mariadb-install-db --no-defaults --user="$owner" --datadir="$dir/data" --auth-root-authentication-method=socket \
			--skip-test-db --skip-name-resolve >"$dir/install-db.log" 2>&1 \
			|| fail "mariadb-install-db failed: $(first_error "$dir/install-db.log")"
	fi
	log "starting MariaDB $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$port"
	# --no-defaults: nothing from /etc/mysql (the system instance's socket, port and data); the
	# character set and collation of Debian's own configuration.
	setsid mariadbd --no-defaults --user="$owner" --datadir="$dir/data" --bind-address=127.0.0.1 --port="$port" \
		--socket="$dir/run/mariadb.sock" --pid-file="$dir/run/mariadb.pid" --log-error="$dir/mariadb.log" \
		--character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --skip-name-resolve \
		--innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=128M </dev/null >>"$dir/mariadb.log" 2>&1 &
	local pid=$! deadline=$((SECONDS + START_TIMEOUT))
	until mariadb-admin --no-defaults --socket="$dir/run/mariadb.sock" --user=root ping >/dev/null 2>&1; do
		alive "$pid" || fail "MariaDB exited while starting: $(tail -n 3 "$dir/mariadb.log")"
		((SECONDS < deadline)) || fail "MariaDB did not accept connections within $START_TIMEOUT s"
		sleep 0.2
	done
	mariadb --no-defaults --socket="$dir/run/mariadb.sock" --user=root --execute="
		CREATE USER IF NOT EXISTS 'zklock'@'127.0.0.1' IDENTIFIED BY 'zklock';
		GRANT ALL PRIVILEGES ON *.* TO 'zklock'@'127.0.0.1';" || fail "cannot create the user zklock"
	mariadb --no-defaults --protocol=tcp --host=127.0.0.1 --port="$port" --user=zklock --password=zklock \
		--execute="SELECT 1" >/dev/null || fail "MariaDB does not accept zklock on 127.0.0.1:$port"
	log "MariaDB accepts connections on 127.0.0.1:$port (user zklock)"
}

mariadb_stop() {
	local pid
	pid="$(pid_from "$dir/run/mariadb.pid")"
	if ! alive "$pid"; then
		return 0
	fi
	log "stopping MariaDB (pid $pid)"
	# SIGTERM is MariaDB's normal shutdown; SIGKILL if it does not end in time.
	kill -TERM "$pid" 2>/dev/null || true
	if ! wait_gone "$pid"; then
		kill -KILL "$pid" 2>/dev/null || true
		wait_gone "$pid" || fail "MariaDB (pid $pid) did not stop"
	fi
}

# --- main --------------------------------------------------------------------------------------

(($# >= 3)) || usage
command="$1"
kind="$2"
[[ "$kind" == postgres || "$kind" == mariadb ]] || usage
case "$command" in
	start)
		(($# == 4)) || usage
		port="$4"
		[[ "$port" =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || fail "not a port: $port"
		;;
	stop)
		(($# == 3)) || usage
		;;
	*)
		usage
		;;
esac
((EUID == 0)) || unavailable "must run as root: it installs packages and runs the server as a system user of its own"
mkdir -p "$3"
dir="$(cd "$3" && pwd)"
owner="zklock-${kind/postgres/pg}"
"${kind}_${command}"
