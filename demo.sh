#!/usr/bin/env bash
# Flash-sale demo of zk-lock: several instances of the sample app, each its own JVM, share one
# ZooKeeper server and one database: by default an H2 file database that app-1 serves to the
# others, with --database postgres a PostgreSQL server that the demo starts (see below). The same
# load is sent four times: to the locked purchase; to the reactive purchase (a Mono under the same
# lock, on R2DBC, its writes fenced by the same row: R2dbcLockFence); to the locked purchase again
# after the instances were restarted with local hand-off off (zk.lock.local-handoff.enabled=false,
# all else the same); and to the unlocked one. The database is audited after each run; one RESULT
# line each, and a HANDOFF line comparing the two blocking locked runs.
# Between the reactive run and the restart, producers on app-1 and consumers on the other instances
# move 200 items through an order queue of capacity 5 in the shared database, each side waiting on
# the distributed Condition of the queue's lock (LockTemplate.lock(key).newCondition()) for the
# other side to signal: one CONDITION line (items produced, consumed, duplicates, lost, the waits on
# the condition, and the time from an item's insert to its take by a consumer that had waited).
# Meanwhile every instance fires a scheduled stock report every 2 s; one SCHEDULED line per job says
# how many ticks ran and how many ran on more than one instance.
#
# With --chaos, only the locked run is made, every other purchase of it sent to the reactive
# purchase (one SKU, one lock and one fenced row for both), and while it goes on app-2 (never app-1,
# which serves the H2 database) is frozen with SIGSTOP for longer than its session timeout, then
# resumed with SIGCONT, again and again: its grants expire while it sleeps, another instance takes
# the lock, and the resumed instance is a zombie holder. Each freeze waits (bounded) until app-2
# holds a lock.
# The instances run with a 2 s session timeout and 10 ms of work between grant and first write; the
# store's fence (JdbcLockFence, R2dbcLockFence for the reactive purchase) must refuse the zombies'
# writes. A CHAOS line counts the pauses, the grants the instances reported lost (zk.lock.lost) and
# the writes the fences refused, of the blocking and of the reactive purchase; the RESULT
# line must still say oversold=0 lost_updates=0. The scheduled jobs stay on: app-2 may run a tick
# another instance runs too after taking its lock or leadership over (a zombie leader), and each
# SCHEDULED line counts those duplicates and the duplicate writes that committed, which must be 0
# (the jobs write through the fence with their lock's or leadership term's token).
# With --keep, only two locked runs are made, each sending every purchase to app-1 (a sticky route:
# the SKU's lock never moves between instances), one request at a time unless --concurrency says
# otherwise: first as the instances start, kept locks off; then after the instances were restarted
# with zk.lock.keep.enabled=true, all else the same. A KEPT line compares the two (purchases per
# second, lock wait p50 and p99) and gives app-1's kept grants (zk.lock.kept.grants: purchases
# granted on the kept znode, without a ZooKeeper request); both RESULT lines must say oversold=0
# lost_updates=0, and the kept run must have kept grants.
# --zookeeper runs any mode on an existing ensemble.
# In every mode a Prometheus server (scripts/prometheus-server.sh: Debian's prometheus, installed
# when missing; on the loopback address, under zk-lock-sample-app/target/demo/prometheus) scrapes
# every instance's /actuator/prometheus every 2 s as the user admin, with the alert rules of
# monitoring/prometheus loaded. After the runs, every query of the Grafana dashboard
# (monitoring/grafana/zk-lock-dashboard.json) runs against what it recorded
# (io.github.zklock.chaos.DashboardCheck), and a PROMETHEUS line says how many targets were up, how
# many samples were scraped and how many queries answered series; the dashboard's panels are drawn
# from the same answers in target/demo/dashboard.png. Where Prometheus cannot be installed or run,
# the line says so and the demo goes on; --no-prometheus leaves it out, --prometheus-keep leaves
# the server running after the demo (with its data) to browse. The demo's own ZooKeeper server
# serves its metrics too (io.github.zklock.sample.demo.ZooKeeperMeters), which Prometheus scrapes as
# the job zookeeper: the PROMETHEUS line then says how many of its series it holds.
# The instances' Actuator is behind HTTP Basic: the demo gives its user admin the password in
# SAMPLE_SECURITY_ADMIN_PASSWORD if set, else one of its own for the run.
#
# --database postgres runs any mode on PostgreSQL: scripts/database-server.sh starts a server under
# zk-lock-sample-app/target/demo/postgres on a free port (Debian's postgresql, installed when
# missing: that needs root and apt-get), the demo creates the database zklock_demo in it, and the
# instances, the load generator and the audits all use it; no instance serves the database then.
# Where PostgreSQL cannot be installed or run, the demo fails saying so.
#
# --tls runs any mode over TLS with mutual authentication, on a ZooKeeper server that
# scripts/secure-zookeeper.sh starts under zk-lock-sample-app/target/demo/zookeeper-tls on a free
# port (Debian's zookeeper 3.8, installed when missing: that needs root and apt-get; run as its
# system user zklock-zk): TLS only, a client certificate required (ssl.clientAuth=need), the
# build's test certificates (target/test-tls, which the build's TLS tests generate; the script
# generates them there when they are missing). The instances connect with zk.lock.ssl.bundle=zk,
# a Spring Boot SSL bundle of the client certificate CN=zk-lock-app and the test CA, and
# zk.lock.fail-fast=true; the server makes the certificate their sessions' identity (x509) and the
# library creates the lock znodes for that identity alone. After the runs, a TLS line says what
# the demo observed of the server with a ZooKeeper client of its own
# (io.github.zklock.sample.demo.TlsAudit): the protocol and cipher suite a client with the
# certificate negotiated, what it and a client without one got for ruok, the ACL of the root path
# /locks, and how many znodes below it have another ACL. Where the server cannot be installed or
# run, the demo fails saying so. Not with --zookeeper.
#
# Usage: ./demo.sh [--instances N] [--requests N] [--concurrency N] [--stock N] [--think-time MS]
#                  [--skip-no-handoff] [--chaos [--pause MS] | --keep] [--database h2|postgres] [--aot]
#                  [--tls | --zookeeper HOST:PORT] [--no-prometheus | --prometheus-keep]
#
# Exit status: 0 when no locked run (the reactive one included) oversold or lost an update, no
# request failed (other than sold out or lock busy; under --chaos also lock lost or lock service
# unavailable), the CONDITION line showed every item produced and consumed once (none lost, no
# duplicate, the queue never above its capacity), and no
# scheduled tick ran twice (under --chaos: app-2 was frozen at least once and no duplicate tick
# committed its write), every query of the dashboard answered series when Prometheus ran, and under
# --tls the TLS line showed the root path and every znode below it
# with the ACL x509:CN=zk-lock-app:cdrwa alone, an answer to the client with the certificate and
# none to the client without; non-zero otherwise.
# The HANDOFF line is a measurement, not a check. Every process it starts (the PostgreSQL server
# and the TLS ZooKeeper server included) is stopped on exit, also on failure and on Ctrl-C. It
# writes only to target/ directories: the build's (under --tls target/test-tls, the TLS material),
# and zk-lock-sample-app/target/demo for the database, the ZooKeeper data and the logs (--database
# postgres may also install Debian's postgresql package and create its system user, zklock-pg;
# --tls Debian's zookeeper package and its system user, zklock-zk).
set -euo pipefail

instances=3
requests=1500
concurrency=32
stock=500
think_time_ms=0
no_handoff_run=1
chaos=0
keep=0
pause_ms=3500
zookeeper=
database=h2
aot=0
tls=0
prometheus=1
prometheus_keep=0
# The metrics port of the demo's own ZooKeeper server, when Prometheus scrapes it.
zk_metrics=()

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -n 's/^# \{0,1\}//p'
	cat <<'EOF'

Options:
  --instances N     application instances (separate JVMs) to start, default 3
  --requests N      purchase requests per run, default 1500
  --concurrency N   requests in flight at once, spread round-robin over the instances, default 32
  --stock N         stock set before each run, default 500
  --think-time MS   pause between reading and writing the stock in every purchase (every run),
                    default 0
  --skip-no-handoff skip the locked run without local hand-off and the restart of the instances
                    it needs (no HANDOFF line)
  --chaos           the zombie-holder run instead (see above); default --requests 2000 and
                    --stock 2000 there; needs at least 2 instances
  --keep            the kept-locks runs instead (see above): default --concurrency 1 there
  --pause MS        with --chaos, how long each freeze lasts, default 3500: it must exceed the
                    session timeout the ensemble grants (2 s with the demo's own server; an
                    ensemble grants at least 2 x its tickTime); default 7000 with --tls, whose
                    server's tickTime is 2 s (sessions of at least 4 s, expired up to a tick late)
  --database h2|postgres
                    the database the instances share, default h2 (a file database, served by
                    app-1); postgres starts a PostgreSQL server (see above)
  --aot             start the instances from the application context the build processed ahead
                    of time (Spring AOT: -Dspring.aot.enabled=true; the jar holds it, processed
                    for a shared ZooKeeper)
  --tls             run on a ZooKeeper server that speaks TLS only and requires a client
                    certificate, started by scripts/secure-zookeeper.sh (see above; needs root)
  --zookeeper HOST:PORT
                    use this ZooKeeper ensemble (a connect string) instead of starting a server
  --no-prometheus   start no Prometheus server (no PROMETHEUS line, no dashboard check)
  --prometheus-keep leave the Prometheus server running after the demo, to browse its data
EOF
}

positive() {
	[[ $2 =~ ^[0-9]{1,9}$ ]] && ((10#$2 >= $3)) || { echo "demo.sh: $1 must be a whole number >= $3, was '$2'" >&2; exit 2; }
}

while (($#)); do
	case $1 in
		--instances | --requests | --concurrency | --stock | --think-time | --pause | --database | --zookeeper)
			(($# >= 2)) || { echo "demo.sh: $1 needs a value" >&2; exit 2; }
			case $1 in
				--instances) positive "$1" "$2" 1; instances=$2 ;;
				--requests) positive "$1" "$2" 1; requests=$2; requests_given=1 ;;
				--concurrency) positive "$1" "$2" 1; concurrency=$2; concurrency_given=1 ;;
				--stock) positive "$1" "$2" 0; stock=$2; stock_given=1 ;;
				--think-time) positive "$1" "$2" 0; think_time_ms=$2 ;;
				--pause) positive "$1" "$2" 100; pause_ms=$2; pause_given=1 ;;
				--database)
					[[ $2 == h2 || $2 == postgres ]] || { echo "demo.sh: --database must be h2 or postgres, was '$2'" >&2; exit 2; }
					database=$2 ;;
				--zookeeper)
					[[ $2 =~ ^[^[:space:]/]+$ ]] || { echo "demo.sh: --zookeeper needs HOST:PORT[,HOST:PORT...], was '$2'" >&2; exit 2; }
					zookeeper=$2 ;;
			esac
			shift 2 ;;
		--skip-no-handoff) no_handoff_run=0; shift ;;
		--chaos) chaos=1; shift ;;
		--keep) keep=1; shift ;;
		--aot) aot=1; shift ;;
		--tls) tls=1; shift ;;
		--no-prometheus) prometheus=0; shift ;;
		--prometheus-keep) prometheus_keep=1; shift ;;
		-h | --help) usage; exit 0 ;;
		*) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if ((prometheus_keep && !prometheus)); then
	echo "demo.sh: --prometheus-keep keeps the Prometheus server that --no-prometheus leaves out; choose one" >&2
	exit 2
fi
if ((tls)) && [[ -n $zookeeper ]]; then
	echo "demo.sh: --tls starts a ZooKeeper server of its own (TLS only, client certificates required); it cannot be combined with --zookeeper" >&2
	exit 2
fi
if ((chaos && keep)); then
	echo "demo.sh: --chaos and --keep are two different runs; choose one" >&2
	exit 2
fi
if ((keep)); then
	# One request at a time: with several in flight on app-1, local hand-off keeps the znode anyway.
	[[ -n ${concurrency_given:-} ]] || concurrency=1
	no_handoff_run=0
fi
if ((chaos)); then
	((instances >= 2)) || { echo "demo.sh: --chaos needs at least 2 instances (it freezes app-2, never app-1)" >&2; exit 2; }
	[[ -n ${requests_given:-} ]] || requests=2000
	[[ -n ${stock_given:-} ]] || stock=2000
	# The TLS server's tickTime is 2 s: it grants the instances' 2 s sessions as 4 s, and expires a
	# session at the first tick after its timeout, up to 6 s.
	((tls == 0)) || [[ -n ${pause_given:-} ]] || pause_ms=7000
	no_handoff_run=0
fi

cd "$(dirname "$0")"
root=$(pwd)
module=zk-lock-sample-app
jar=$root/$module/target/zk-lock-sample-app.jar
work=$root/$module/target/demo
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
# Small heaps and the serial collector leave the two-core budget to the work; -XX:-UsePerfData and
# java.io.tmpdir keep every file the JVMs write (Tomcat work dirs, native libraries) below target/.
# H2's AUTO_SERVER listens on h2.bindAddress only.
jvm_opts=(-Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData
	"-Djava.io.tmpdir=$work/tmp" -Dh2.bindAddress=127.0.0.1)
# The instances only (the load generator and the audits are not Spring applications).
aot_opts=()
((aot == 0)) || aot_opts=(-Dspring.aot.enabled=true)
# The instances' TLS settings under --tls (set when its server has started).
tls_args=()
launcher=org.springframework.boot.loader.launch.PropertiesLauncher
# The instances' Actuator is behind HTTP Basic: the zklocks endpoint and the metrics the chaos run
# reads need the user admin, whose password is SAMPLE_SECURITY_ADMIN_PASSWORD when set, else one
# drawn for this run (rather than the sample's public demo default).
admin_password=${SAMPLE_SECURITY_ADMIN_PASSWORD:-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')}

zk_pid=
app_pids=()
load_pid=
chaos_pid=
# With --database postgres: the server's directory once its start began, and the start script's pid
# while it runs. The same for the ZooKeeper server of --tls.
pg_dir=
pg_start_pid=
tls_dir=
tls_start_pid=
# The Prometheus server's directory once it started, the start script's pid while it runs, why it
# did not start (when it could not be installed or run here), and when it began scraping.
prom_dir=
prom_start_pid=
prom_skip=
prom_from=
prom_status=0
# Under --tls: the server's TLS material, and the TLS line once observed.
tls_files=
tls_line=
# Stop processes with SIGTERM, wait a bounded time for them to exit, then SIGKILL what is left.
stop() {
	(($#)) || return 0
	kill "$@" 2>/dev/null || true
	local deadline=$((SECONDS + 15)) alive pid
	while ((SECONDS < deadline)); do
		alive=0
		for pid; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive)) || break
		sleep 0.1
	done
	kill -9 "$@" 2>/dev/null || true
	wait "$@" 2>/dev/null || true
}
# Dependencies last: the load generator, the instances that use app-1's database server (with H2),
# app-1, then ZooKeeper (the demo's own or the TLS server) and the PostgreSQL server.
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	if [[ -n $load_pid$zk_pid$pg_dir$tls_dir ]] || ((${#app_pids[@]})); then
		echo "Stopping the demo processes"
	fi
	[[ -z $chaos_pid ]] || stop "$chaos_pid"
	[[ -z $load_pid ]] || stop "$load_pid"
	# A frozen instance handles no signal but SIGKILL until it is resumed.
	((${#app_pids[@]} == 0)) || kill -CONT "${app_pids[@]}" 2>/dev/null || true
	((${#app_pids[@]} < 2)) || stop "${app_pids[@]:1}"
	((${#app_pids[@]} < 1)) || stop "${app_pids[0]}"
	[[ -z $zk_pid ]] || stop "$zk_pid"
	[[ -z $tls_start_pid ]] || stop "$tls_start_pid"
	[[ -z $tls_dir ]] || stop_secure_zookeeper
	[[ -z $pg_start_pid ]] || stop "$pg_start_pid"
	[[ -z $pg_dir ]] || stop_postgres
	[[ -z $prom_start_pid ]] || stop "$prom_start_pid"
	if [[ -n $prom_dir ]]; then
		if ((prometheus_keep)); then
			echo "Prometheus keeps running on http://127.0.0.1:$prom_port with the demo's data (stop it with: scripts/prometheus-server.sh stop ${prom_dir#"$root"/})"
		else
			STOP_TIMEOUT=20 "$root/scripts/prometheus-server.sh" stop "$prom_dir" >>"$work/prometheus-server.log" 2>&1 ||
				echo "demo.sh: the Prometheus server in ${prom_dir#"$root"/} did not stop" >&2
		fi
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'echo "Interrupted"; exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "demo.sh: $*" >&2
	exit 1
}

# Stop the PostgreSQL server in $pg_dir: a fast shutdown, immediate if that takes longer than 20 s.
stop_postgres() {
	STOP_TIMEOUT=20 "$root/scripts/database-server.sh" stop postgres "$pg_dir" >>"$work/postgres-server.log" 2>&1 ||
		echo "demo.sh: the PostgreSQL server in ${pg_dir#"$root"/} did not stop (log: ${work#"$root"/}/postgres-server.log)" >&2
}

# Stop the ZooKeeper server of --tls in $tls_dir (the script waits up to 20 s, then kills it).
stop_secure_zookeeper() {
	STOP_TIMEOUT=20 "$root/scripts/secure-zookeeper.sh" stop "$tls_dir" >>"$work/zookeeper-tls-server.log" 2>&1 ||
		echo "demo.sh: the ZooKeeper server in ${tls_dir#"$root"/} did not stop (log: ${work#"$root"/}/zookeeper-tls-server.log)" >&2
}

# Start the ZooKeeper server of --tls under $work/zookeeper-tls on a free port: TLS only, a client
# certificate required. The start script installs Debian's package when missing and returns once
# the server answers over TLS; it exits 3 where the server cannot be installed or run here. In the
# background, so that a signal is handled at once.
start_secure_zookeeper() {
	local log=$work/zookeeper-tls-server.log status=0
	next_free_port
	zk_port=$free_port
	zk_connect=127.0.0.1:$zk_port
	echo "Starting ZooKeeper with TLS on $zk_connect, client certificates required (scripts/secure-zookeeper.sh; installs Debian's zookeeper when missing)"
	tls_dir=$work/zookeeper-tls
	tls_files=$root/target/test-tls
	"$root/scripts/secure-zookeeper.sh" start "$tls_dir" "$zk_port" --client-auth need --tls-dir "$tls_files" \
		>>"$log" 2>&1 &
	tls_start_pid=$!
	wait "$tls_start_pid" || status=$?
	tls_start_pid=
	if ((status == 3)); then
		tls_dir= # nothing was started
		fail "--tls: a ZooKeeper server with TLS cannot be installed or run here: $(tail -n 1 "$log") (without --tls the demo needs nothing installed)"
	fi
	((status == 0)) || { tail -n 5 "$log" >&2; fail "the ZooKeeper server with TLS did not start (exit $status, log: ${log#"$root"/})"; }
	# The instances' SSL bundle zk: the client certificate CN=zk-lock-app and the test CA (PKCS12,
	# the script's password). zk.lock.ssl.bundle turns TLS on.
	tls_args=(--zk.lock.ssl.bundle=zk --zk.lock.fail-fast=true
		--spring.ssl.bundle.jks.zk.keystore.location="file:$tls_files/client.p12"
		--spring.ssl.bundle.jks.zk.keystore.password=changeit --spring.ssl.bundle.jks.zk.keystore.type=PKCS12
		--spring.ssl.bundle.jks.zk.truststore.location="file:$tls_files/truststore.p12"
		--spring.ssl.bundle.jks.zk.truststore.password=changeit --spring.ssl.bundle.jks.zk.truststore.type=PKCS12)
}

# Start the Prometheus server under $work/prometheus on a free port, scraping the instances that
# write_targets lists (a file it watches), as the user admin. The start script installs Debian's
# package when missing and returns once the server is ready; where it cannot (exit 3), the demo goes
# on without it. In the background, so that a signal is handled at once.
start_prometheus() {
	local log=$work/prometheus-server.log status=0
	next_free_port
	prom_port=$free_port
	prom_dir=$work/prometheus
	"$root/scripts/prometheus-server.sh" config "$prom_dir" "$admin_password"
	echo "Starting Prometheus on 127.0.0.1:$prom_port (scripts/prometheus-server.sh; installs Debian's prometheus when missing)"
	"$root/scripts/prometheus-server.sh" start "$prom_dir" "$prom_port" "$prom_dir/prometheus.yml" >>"$log" 2>&1 &
	prom_start_pid=$!
	wait "$prom_start_pid" || status=$?
	prom_start_pid=
	if ((status == 3)); then
		prom_dir=
		prom_skip="Prometheus cannot be installed or run here: $(tail -n 1 "$log")"
		echo "demo.sh: $prom_skip; going on without it" >&2
		return 0
	fi
	((status == 0)) || { tail -n 5 "$log" >&2; fail "Prometheus did not start (exit $status, log: ${log#"$root"/})"; }
	prom_from=$(date +%s)
}

# The instances Prometheus scrapes: written whole, then moved in place, whenever they (re)start.
write_targets() {
	[[ -n $prom_dir ]] || return 0
	local i entries=()
	for i in "${!ports[@]}"; do
		entries+=("{\"targets\": [\"127.0.0.1:${ports[i]}\"], \"labels\": {\"instance_name\": \"app-$((i + 1))\"}}")
	done
	(IFS=,; echo "[${entries[*]}]") >"$prom_dir/targets.json.new"
	mv "$prom_dir/targets.json.new" "$prom_dir/targets.json"
}

# After the runs: every query of the dashboard against what Prometheus recorded, over the demo's
# time (DashboardCheck), its PROMETHEUS line, and the panels drawn in $work/dashboard.png.
check_prometheus() {
	echo
	if [[ -z $prom_dir ]]; then
		echo "PROMETHEUS skipped: ${prom_skip:-off (--no-prometheus)}"
		return 0
	fi
	echo "== Prometheus: the dashboard's queries over the demo (monitoring/grafana/zk-lock-dashboard.json)"
	# Two more scrapes of the instances as they are now.
	sleep 5
	"$java" -Xmx256m -Djava.awt.headless=true -cp "$root/zk-lock-chaos/target/classes:$(cat "$classpath_file")" \
		io.github.zklock.chaos.DashboardCheck --prometheus "http://127.0.0.1:$prom_port" --job zk-lock-sample-app \
		--dashboard "$root/monitoring/grafana/zk-lock-dashboard.json" --from "$prom_from" --to "$(date +%s)" \
		--rate-interval 10s --png "$work/dashboard.png" ${zk_metrics[0]:+--zookeeper-job zookeeper} \
		>"$work/prometheus-check.log" 2>&1 || prom_status=$?
	sed "s#$root/##" "$work/prometheus-check.log"
}

# Fail when a query of the dashboard answered no series (after the other checks' messages).
check_dashboard() {
	((prom_status == 0)) || fail "a query of the dashboard answered no series, or the check failed (exit $prom_status; see the PROMETHEUS lines)"
}

# The newest psql of Debian's PostgreSQL packages, empty if there is none.
find_psql() {
	local psql
	for psql in $(ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V -r); do
		[[ -x $psql ]] && { echo "$psql"; return; }
	done
}

# Run psql as the user zklock against the demo's PostgreSQL server, database $1, further arguments
# after it; bounded.
demo_psql() {
	local dbname=$1
	shift
	PGPASSWORD=zklock PGCONNECT_TIMEOUT=10 timeout 60 "$psql" --no-psqlrc --quiet -v ON_ERROR_STOP=1 \
		--host=127.0.0.1 --port="$pg_port" --username=zklock --dbname="$dbname" "$@"
}

# Start a PostgreSQL server under $work/postgres on a free port and create the database zklock_demo
# in it. The start script installs Debian's package when missing; it exits 3 where that cannot be
# done or the server cannot run here. In the background, so that a signal is handled at once.
start_postgres() {
	local log=$work/postgres-server.log status=0
	next_free_port
	pg_port=$free_port
	echo "Starting PostgreSQL on 127.0.0.1:$pg_port (scripts/database-server.sh; installs Debian's postgresql when missing)"
	pg_dir=$work/postgres
	"$root/scripts/database-server.sh" start postgres "$pg_dir" "$pg_port" >>"$log" 2>&1 &
	pg_start_pid=$!
	wait "$pg_start_pid" || status=$?
	pg_start_pid=
	if ((status == 3)); then
		pg_dir= # nothing was started
		fail "PostgreSQL cannot be installed or run here: $(tail -n 1 "$log") (the default, --database h2, needs nothing installed)"
	fi
	((status == 0)) || { tail -n 5 "$log" >&2; fail "PostgreSQL did not start (exit $status, log: ${log#"$root"/})"; }
	psql=$(find_psql)
	[[ -n $psql ]] || fail "PostgreSQL runs, but there is no /usr/lib/postgresql/*/bin/psql to create the demo's database with"
	demo_psql postgres --command="CREATE DATABASE zklock_demo" >>"$log" 2>&1 ||
		fail "cannot create the database zklock_demo (log: ${log#"$root"/})"
	pg_version=$(demo_psql zklock_demo --tuples-only --no-align --command="SHOW server_version" 2>>"$log") ||
		fail "cannot connect to the database zklock_demo (log: ${log#"$root"/})"
	pg_version=${pg_version%% *}
}

# Sets free_port to a port nobody listens on, on loopback, not handed out before; below Linux's
# ephemeral range, so that no outgoing connection takes it meanwhile.
taken=" "
next_free_port() {
	local port
	for _ in $(seq 1 200); do
		port=$((20000 + RANDOM % 12000))
		[[ $taken == *" $port "* ]] && continue
		if ! tcp_open "$port"; then
			taken+="$port "
			free_port=$port
			return
		fi
	done
	fail "no free port found"
}

# $1 port, $2 host (default 127.0.0.1)
tcp_open() {
	(exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# Wait until a started process answers, failing early if it dies. $1 pid, $2 name, $3 log file,
# $4 seconds, then the probe command.
await() {
	local pid=$1 name=$2 log=$3 seconds=$4
	shift 4
	local deadline=$((SECONDS + seconds))
	until "$@"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$log" >&2 || true
			fail "$name exited during start-up (log: ${log#"$root"/})"
		fi
		if ((SECONDS >= deadline)); then
			tail -n 30 "$log" >&2 || true
			fail "$name not ready within ${seconds}s (log: ${log#"$root"/})"
		fi
		sleep 0.25
	done
}

# Any HTTP answer for an unknown SKU (404) means the web server, ZooKeeper and the database work.
http_ready() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' --connect-timeout 1 --max-time 3 \
		"http://127.0.0.1:$1/api/stock/readiness-probe" 2>/dev/null) || true
	[[ $code == 404 || $code == 200 ]]
}

command -v curl >/dev/null || fail "curl is needed"
command -v "$java" >/dev/null || fail "java is needed (JDK 17 or later)"

# Build when the jar or the dashboard check's class path is missing or older than a main source or
# a pom of the build (the check runs from zk-lock-chaos, as the fault campaign does).
classpath_file=$root/zk-lock-chaos/target/campaign-classpath.txt
if [[ ! -f $jar || ! -f $classpath_file ]] ||
	[[ -n $(find pom.xml zk-lock-*/pom.xml zk-lock-*/src/main -newer "$jar" -print -quit) ]] ||
	[[ -n $(find pom.xml zk-lock-*/pom.xml zk-lock-*/src/main -newer "$classpath_file" -print -quit) ]]; then
	echo "Building $module and the dashboard check (./mvnw -B -q -DskipTests install)"
	./mvnw -B -q install -DskipTests -Dinvoker.skip=true -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
		-pl "$module",zk-lock-chaos -am
fi

# A PostgreSQL or TLS ZooKeeper server left running by an earlier demo that was killed outright (no
# trap ran) would outlive its deleted data directory: stop it first.
if [[ -f $work/postgres/data/postmaster.pid ]]; then
	"$root/scripts/database-server.sh" stop postgres "$work/postgres" >/dev/null 2>&1 ||
		echo "demo.sh: could not stop the PostgreSQL server of an earlier demo in ${work#"$root"/}/postgres" >&2
fi
if [[ -f $work/zookeeper-tls/zookeeper.pid ]]; then
	"$root/scripts/secure-zookeeper.sh" stop "$work/zookeeper-tls" >/dev/null 2>&1 ||
		echo "demo.sh: could not stop the ZooKeeper server of an earlier demo in ${work#"$root"/}/zookeeper-tls" >&2
fi
if [[ -f $work/prometheus/prometheus.pid ]]; then
	"$root/scripts/prometheus-server.sh" stop "$work/prometheus" >/dev/null 2>&1 ||
		echo "demo.sh: could not stop the Prometheus server of an earlier demo in ${work#"$root"/}/prometheus" >&2
fi
# Everything of an earlier demo goes (the TLS material of --tls is the build's, in target/test-tls).
rm -rf "$work"
mkdir -p "$work/tmp"
started_at=$SECONDS
((prometheus == 0)) || start_prometheus

if [[ -n $zookeeper ]]; then
	zk_connect=$zookeeper
	first=${zookeeper%%,*}
	[[ $first == *:* ]] || fail "--zookeeper $zookeeper: the first server has no port"
	echo "Using the ZooKeeper ensemble $zk_connect"
	tcp_open "${first##*:}" "${first%:*}" || fail "ZooKeeper at $first does not accept connections"
elif ((tls)); then
	start_secure_zookeeper
else
	next_free_port
	zk_port=$free_port
	zk_connect=127.0.0.1:$zk_port
	if [[ -n $prom_dir ]]; then
		# The server's own metrics, for Prometheus's job zookeeper.
		next_free_port
		zk_metrics=("$free_port")
		echo "[{\"targets\": [\"127.0.0.1:$free_port\"], \"labels\": {\"instance_name\": \"zookeeper\"}}]" \
			>"$prom_dir/zookeeper-targets.json"
	fi
	echo "Starting ZooKeeper on $zk_connect${zk_metrics[0]:+ (its metrics on http://127.0.0.1:${zk_metrics[0]}/metrics)}"
	"$java" "${jvm_opts[@]}" -cp "$jar" -Dloader.main=io.github.zklock.sample.demo.StandaloneZooKeeper "$launcher" \
		"$zk_port" "$work/zookeeper" "${zk_metrics[@]}" >"$work/zookeeper.log" 2>&1 &
	zk_pid=$!
fi

# A row lock is waited for up to 30 s: under --chaos a frozen instance may hold one.
if [[ $database == postgres ]]; then
	start_postgres
	# PostgreSQL waits for a lock without limit by default: lock_timeout bounds it, for every
	# connection of the URL (the driver's options parameter, "-c lock_timeout=30s").
	db_url="jdbc:postgresql://127.0.0.1:$pg_port/zklock_demo?options=-c%20lock_timeout%3D30s"
	db_user=zklock
	db_password=zklock
	db_name=PostgreSQL
	db_label="PostgreSQL $pg_version on 127.0.0.1:$pg_port (database zklock_demo)"
	first_creates="it creates the tables"
else
	# The first instance to open the file database serves it to the others (AUTO_SERVER). H2
	# waits 1 s for a row lock by default.
	db_url="jdbc:h2:file:$work/db/stock;AUTO_SERVER=TRUE;LOCK_TIMEOUT=30000"
	db_user=sa
	db_password=
	db_name=H2
	db_label="H2 file database (served by app-1)"
	first_creates="it creates the database"
fi

ports=()
urls=()
# Start instance $1, logging to app-$1$2.log, with the further application arguments after $2.
start_instance() {
	local n=$1 log=$work/app-$1$2.log port
	shift 2
	next_free_port
	port=$free_port
	ports+=("$port")
	urls+=("http://127.0.0.1:$port")
	"$java" "${jvm_opts[@]}" "${aot_opts[@]}" -jar "$jar" \
		--server.address=127.0.0.1 --server.port="$port" \
		--zk.lock.embedded.enabled=false --zk.lock.connect-string="$zk_connect" \
		--spring.datasource.url="$db_url" --spring.datasource.username="$db_user" \
		--spring.datasource.password="$db_password" \
		--sample.instance-id="app-$n" --sample.purchase-think-time="${think_time_ms}ms" \
		--sample.security.admin-password="$admin_password" \
		"${tls_args[@]}" "$@" >"$log" 2>&1 &
	app_pids+=($!)
}

# Start every instance and wait until each answers: app-1 first, since it creates the tables (and,
# with H2, the database; on a restart it serves that again), then the others together. $1 is the
# log suffix, the further arguments go to every instance.
start_instances() {
	local suffix=$1 n i
	shift
	start_instance 1 "$suffix" "$@"
	await "${app_pids[0]}" app-1 "$work/app-1$suffix.log" 90 http_ready "${ports[0]}"
	for ((n = 2; n <= instances; n++)); do
		start_instance "$n" "$suffix" "$@"
	done
	for ((i = 1; i < instances; i++)); do
		await "${app_pids[i]}" "app-$((i + 1))" "$work/app-$((i + 1))$suffix.log" 90 http_ready "${ports[i]}"
	done
	url_list=$(IFS=,; echo "${urls[*]}")
	write_targets
}

# Stop every instance, in the order of cleanup: app-1, which serves the H2 database, last.
stop_instances() {
	((${#app_pids[@]} < 2)) || stop "${app_pids[@]:1}"
	((${#app_pids[@]} < 1)) || stop "${app_pids[0]}"
	app_pids=()
	ports=()
	urls=()
}

[[ -z $zk_pid ]] || await "$zk_pid" ZooKeeper "$work/zookeeper.log" 30 tcp_open "$zk_port"

chaos_args=()
if ((chaos)); then
	chaos_args=(--zk.lock.session-timeout=2s --sample.purchase-prepare-time=10ms)
fi
echo "Starting $instances app instances (app-1 first: $first_creates)$( ((aot)) && echo ", from the context processed ahead of time (Spring AOT)")"
start_instances "" "${chaos_args[@]}"
echo "Ready after $((SECONDS - started_at))s: ZooKeeper $zk_connect$( ((tls)) && echo " (TLS only, client certificate CN=zk-lock-app)"), $db_label, instances ${urls[*]}"

# A bound on each run, generous for 10 requests per second.
run_timeout=$((60 + requests / 10))
# In the background, so that a signal to this script is handled at once, not after the run.
run_load() {
	local mode=$1 status=0
	echo
	echo "== $mode: stock $stock, $requests purchases, $concurrency at a time, over $instances instances on $db_name${2:-}"
	"$java" "${jvm_opts[@]}" -cp "$jar" -Dloader.main=io.github.zklock.sample.demo.LoadGenerator "$launcher" \
		--mode "$mode" --urls "$url_list" --jdbc-url "$db_url" --jdbc-user "$db_user" --jdbc-password "$db_password" \
		--sku "flash-sale-$mode" \
		--stock "$stock" --requests "$requests" --concurrency "$concurrency" --timeout-seconds "$run_timeout" \
		>"$work/load-$mode.log" 2>&1 &
	load_pid=$!
	wait "$load_pid" || status=$?
	load_pid=
	cat "$work/load-$mode.log"
	return "$status"
}

# Producers on app-1 and consumers on the other instances move items through an order queue, each
# side waiting on the queue lock's Condition (ProducerConsumerLoad): the CONDITION line. In the
# background, as run_load.
condition_items=200
run_condition() {
	local status=0
	echo
	echo "== condition: $condition_items items through an order queue of capacity 5 on $db_name, 3 producers on app-1," \
		"4 consumers on $( ((instances > 1)) && echo "the other instances" || echo "app-1")"
	"$java" "${jvm_opts[@]}" -cp "$jar" -Dloader.main=io.github.zklock.sample.demo.ProducerConsumerLoad "$launcher" \
		--urls "$url_list" --items "$condition_items" --producers 3 --consumers 4 --timeout-seconds 120 \
		>"$work/condition.log" 2>&1 &
	load_pid=$!
	wait "$load_pid" || status=$?
	load_pid=
	cat "$work/condition.log"
	return "$status"
}

# Prints the value of field $2 of the RESULT line $1 (name=value pairs).
result_field() {
	[[ " $1 " =~ \ $2=([^ ]+)\  ]] && echo "${BASH_REMATCH[1]}"
}

# Compares the locked run (hand-off on) with the locked-no-handoff run: the HANDOFF line.
compare_handoff() {
	local with without
	with=$(grep '^RESULT ' "$work/load-locked.log" || true)
	without=$(grep '^RESULT ' "$work/load-locked-no-handoff.log" || true)
	echo
	echo "== local hand-off: locked over locked-no-handoff"
	if [[ -z $with || -z $without ]]; then
		echo "No HANDOFF line: a locked run printed no RESULT"
		return
	fi
	awk -v rps="$(result_field "$with" throughput_rps)" -v rps_off="$(result_field "$without" throughput_rps)" \
		-v p99="$(result_field "$with" lock_wait_p99_ms)" -v p99_off="$(result_field "$without" lock_wait_p99_ms)" '
		function ratio(a, b) { return (b > 0) ? sprintf("%.2f", a / b) : "n/a" }
		BEGIN {
			throughput = ratio(rps, rps_off); p99_ratio = ratio(p99, p99_off)
			printf "HANDOFF throughput_ratio=%s lock_wait_p99_ratio=%s\n", throughput, p99_ratio
			print "   (each the locked run'"'"'s figure over the locked-no-handoff run'"'"'s: requests served per"
			print "    second, and the lock wait at the 99th percentile)"
		}'
}

# Freeze instance $1 (pid) named $2, base URL $3, again and again while it holds a lock (as its
# zklocks endpoint says; a bounded wait for that, then frozen anyway), each time for --pause ms,
# until this background job gets SIGTERM; then resume it. The number of freezes so far is kept in
# $work/chaos-pauses, one line per freeze in $work/chaos.log.
freeze_again_and_again() {
	local pid=$1 name=$2 url=$3 pauses=0 seconds holding deadline
	seconds=$(awk -v ms="$pause_ms" 'BEGIN { printf "%.3f", ms / 1000 }')
	trap 'kill -CONT "$pid" 2>/dev/null; exit 0' TERM
	echo 0 >"$work/chaos-pauses"
	while :; do
		sleep 2 & wait $!
		holding=no
		deadline=$((SECONDS + 5))
		while ((SECONDS < deadline)); do
			if curl -s --max-time 1 -u "admin:$admin_password" "$url/actuator/zklocks" 2>/dev/null | grep -q '"held":\[{'; then
				holding=yes
				break
			fi
		done
		kill -STOP "$pid" 2>/dev/null || return 0
		pauses=$((pauses + 1))
		echo "$pauses" >"$work/chaos-pauses"
		echo "chaos: $name frozen (SIGSTOP) for ${seconds}s, pause $pauses, holding a lock: $holding"
		sleep "$seconds" & wait $!
		kill -CONT "$pid" 2>/dev/null || return 0
		echo "chaos: $name resumed (SIGCONT)"
		sleep 3 & wait $!
	done
}

# The sum of the zk.lock.lost counters of the instances, or "?" when one cannot be read.
lost_grants() {
	local total=0 url count
	for url in "${urls[@]}"; do
		count=$(metric_count "$url" zk.lock.lost)
		[[ $count != "?" ]] || { echo "?"; return; }
		total=$((total + count))
	done
	echo "$total"
}

# Prints the count of counter $2 of the instance at base URL $1 (its Actuator metrics endpoint),
# or ? when it cannot be read.
metric_count() {
	local count
	count=$(curl -s --max-time 10 -u "admin:$admin_password" "$1/actuator/metrics/$2" |
		sed -n 's/.*"statistic":"COUNT","value":\([0-9]*\).*/\1/p')
	echo "${count:-?}"
}

# Under --tls, what a ZooKeeper client of the demo's own observes of the server (TlsAudit): prints the
# TLS line and keeps it in tls_line.
observe_tls() {
	local log=$work/tls-audit.log status=0
	echo
	echo "== TLS: the server on $zk_connect, as a client with the certificate CN=zk-lock-app and one without see it"
	"$java" "${jvm_opts[@]}" -cp "$jar" -Dloader.main=io.github.zklock.sample.demo.TlsAudit "$launcher" \
		"$zk_connect" /locks "$tls_files/client.p12" "$tls_files/truststore.p12" changeit >"$log" 2>&1 || status=$?
	tls_line=$(grep '^TLS ' "$log" || true)
	if [[ -n $tls_line ]]; then
		echo "$tls_line"
	else
		grep -v -E ' (DEBUG|INFO) ' "$log" | tail -n 5
		echo "No TLS line (exit $status, log: ${log#"$root"/})"
	fi
}

# Under --tls, fail when the TLS line contradicts what the instances were set up for: lock znodes
# of the certificate's identity alone, and a server that answers only a client with a certificate.
check_tls() {
	((tls)) || return 0
	[[ -n $tls_line ]] || fail "--tls: the demo's client observed nothing of the server (log: ${work#"$root"/}/tls-audit.log)"
	local acl other with without
	acl=$(result_field "$tls_line" root_acl || true)
	other=$(result_field "$tls_line" other_acl_below || true)
	with=$(result_field "$tls_line" with_certificate || true)
	without=$(result_field "$tls_line" without_certificate || true)
	[[ $acl == "x509:CN=zk-lock-app:cdrwa" ]] ||
		fail "--tls: the ACL of /locks is '$acl', not the client certificate's identity alone (x509:CN=zk-lock-app:cdrwa)"
	[[ $other == 0 ]] || fail "--tls: $other znodes below /locks have another ACL than /locks"
	[[ $with == answered:imok ]] || fail "--tls: the client with the certificate got '$with' for ruok"
	[[ $without != answered:* ]] || fail "--tls: the server answered a client without a certificate ($without)"
}

# Under --chaos, app-2 should also lead the scheduled report's group when it is first frozen, so that
# it resumes as a zombie leader: whichever other instance leads gives the leadership up (and queues
# again at the back) until app-2 leads. Bounded; the run goes on without it if it fails.
lead_with_app2() {
	local deadline=$((SECONDS + 15)) i
	while ((SECONDS < deadline)); do
		for i in "${!urls[@]}"; do
			((i != 1)) || continue
			if curl -s --max-time 2 "${urls[$i]}/api/leadership/stock-report" 2>/dev/null | grep -q '"leader":true'; then
				curl -s --max-time 2 -X POST "${urls[$i]}/api/leadership/stock-report/yield" >/dev/null 2>&1 || true
			fi
		done
		if curl -s --max-time 2 "${urls[1]}/api/leadership/stock-report" 2>/dev/null | grep -q '"leader":true'; then
			echo "Chaos: app-2 leads the group stock-report"
			return 0
		fi
		sleep 0.5
	done
	echo "Chaos: app-2 did not come to lead the group stock-report within 15 s; going on"
}

if ((chaos)); then
	chaos_status=0
	echo
	lead_with_app2
	echo "Chaos: app-2 will be frozen for ${pause_ms} ms again and again while the locked run goes on"
	freeze_again_and_again "${app_pids[1]}" app-2 "${urls[1]}" &
	chaos_pid=$!
	run_load locked-chaos ", app-2 frozen and resumed meanwhile" || chaos_status=$?
	stop "$chaos_pid"
	chaos_pid=
	chaos_result=$(grep '^RESULT ' "$work/load-locked-chaos.log" || true)
	fence=$(grep '^FENCE ' "$work/load-locked-chaos.log" || true)
	pauses=$(cat "$work/chaos-pauses" 2>/dev/null || echo 0)
	echo
	echo "CHAOS pauses=$pauses lost_grants=$(lost_grants) stale_writes_rejected=$(result_field "$fence" stale_writes_rejected)" \
		"stale_reactive_writes_rejected=$(result_field "$fence" stale_reactive_writes_rejected)"
	[[ -z $chaos_result ]] || echo "$chaos_result"
	# The scheduled jobs ran on every instance's schedule meanwhile, app-2 a zombie after each freeze:
	# a tick may run twice (duplicates), but the fence must refuse the zombie's write.
	scheduled_status=0
	"$java" "${jvm_opts[@]}" -cp "$jar" -Dloader.main=io.github.zklock.sample.demo.ScheduledAudit "$launcher" \
		"$db_url" "$db_user" "$db_password" --zombies >"$work/scheduled.log" 2>&1 || scheduled_status=$?
	cat "$work/scheduled.log"
	((tls == 0)) || observe_tls
	check_prometheus
	echo
	echo "Demo took $((SECONDS - started_at))s after the build; logs in ${work#"$root"/}"
	[[ -n $chaos_result ]] || fail "the chaos run printed no RESULT (exit $chaos_status)"
	[[ $chaos_result == *" oversold=0 lost_updates=0 "* ]] || fail "the chaos run oversold or lost an update"
	((chaos_status == 0)) || fail "the chaos run failed (exit $chaos_status)"
	((pauses > 0)) || fail "the chaos run ended before app-2 was frozen once: give it more --requests"
	((scheduled_status == 0)) || fail "a scheduled job's duplicate run committed its write, or no job ran (exit $scheduled_status)"
	check_tls
	check_dashboard
	exit 0
fi

if ((keep)); then
	sticky_status=0
	run_load locked-sticky ", every purchase to app-1, kept locks off" || sticky_status=$?
	echo
	echo "Restarting the $instances instances with --zk.lock.keep.enabled=true, all else the same"
	restart_at=$SECONDS
	stop_instances
	start_instances -kept --zk.lock.keep.enabled=true
	echo "Restarted in $((SECONDS - restart_at))s: instances ${urls[*]}"
	kept_status=0
	run_load locked-sticky-kept ", every purchase to app-1, kept locks on" || kept_status=$?
	off=$(grep '^RESULT ' "$work/load-locked-sticky.log" || true)
	on=$(grep '^RESULT ' "$work/load-locked-sticky-kept.log" || true)
	kept_grants=$(metric_count "${urls[0]}" zk.lock.kept.grants)
	echo
	echo "== kept locks: locked-sticky-kept over locked-sticky"
	echo "KEPT throughput_rps=$(result_field "$on" throughput_rps) off_throughput_rps=$(result_field "$off" throughput_rps)" \
		"lock_wait_p50_ms=$(result_field "$on" lock_wait_p50_ms) off_lock_wait_p50_ms=$(result_field "$off" lock_wait_p50_ms)" \
		"lock_wait_p99_ms=$(result_field "$on" lock_wait_p99_ms) off_lock_wait_p99_ms=$(result_field "$off" lock_wait_p99_ms)" \
		"kept_grants=$kept_grants"
	echo "   (kept_grants: app-1's purchases granted on its kept znode, without a ZooKeeper request)"
	((tls == 0)) || observe_tls
	check_prometheus
	echo
	echo "Demo took $((SECONDS - started_at))s after the build; logs in ${work#"$root"/}"
	for run in "locked-sticky:$off:$sticky_status" "locked-sticky-kept:$on:$kept_status"; do
		IFS=: read -r name result status <<<"$run"
		[[ -n $result ]] || fail "the $name run printed no RESULT (exit $status)"
		[[ $result == *" oversold=0 lost_updates=0 "* ]] || fail "the $name run oversold or lost an update"
		((status == 0)) || fail "the $name run failed (exit $status)"
	done
	[[ $kept_grants =~ ^[0-9]+$ ]] || fail "app-1's zk.lock.kept.grants could not be read"
	((kept_grants > 0)) || fail "no purchase of the kept run was granted on a kept znode: zk.lock.keep.enabled=true did not apply"
	check_tls
	check_dashboard
	exit 0
fi

locked_status=0
run_load locked || locked_status=$?
if grep -q 'sales handed over locally (same token as the sale before): 0 of' "$work/load-locked.log"; then
	echo "Note: no sale of the locked run was handed over locally (this build has no local hand-off, or it is off)."
fi
reactive_status=0
run_load locked-reactive ", through the reactive purchase (a Mono on R2DBC, fenced by R2dbcLockFence)" ||
	reactive_status=$?
condition_status=0
run_condition || condition_status=$?
no_handoff_status=0
if ((no_handoff_run)); then
	echo
	echo "Restarting the $instances instances with --zk.lock.local-handoff.enabled=false, all else the same"
	restart_at=$SECONDS
	stop_instances
	start_instances -no-handoff --zk.lock.local-handoff.enabled=false
	echo "Restarted in $((SECONDS - restart_at))s: instances ${urls[*]}"
	run_load locked-no-handoff ", local hand-off off" || no_handoff_status=$?
	compare_handoff
fi
unlocked_status=0
run_load unlocked || unlocked_status=$?

# The scheduled stock report ran on every instance's schedule during every run: audit its ticks.
echo
echo "== scheduled stock report: every instance fires it every 2 s, one should run each tick"
if ((no_handoff_run)); then
	echo "   (the ticks while the instances restarted ran nowhere: they count as idle ticks)"
fi
scheduled_status=0
"$java" "${jvm_opts[@]}" -cp "$jar" -Dloader.main=io.github.zklock.sample.demo.ScheduledAudit "$launcher" \
	"$db_url" "$db_user" "$db_password" >"$work/scheduled.log" 2>&1 || scheduled_status=$?
cat "$work/scheduled.log"
((tls == 0)) || observe_tls
check_prometheus

locked_result=$(grep '^RESULT ' "$work/load-locked.log" || true)
reactive_result=$(grep '^RESULT ' "$work/load-locked-reactive.log" || true)
condition_line=$(grep '^CONDITION ' "$work/condition.log" || true)
unlocked_result=$(grep '^RESULT ' "$work/load-unlocked.log" || true)
echo
echo "Demo took $((SECONDS - started_at))s after the build; logs in ${work#"$root"/}"

[[ -n $locked_result ]] || fail "the locked run printed no RESULT (exit $locked_status)"
[[ $locked_result == *" oversold=0 lost_updates=0 "* ]] || fail "the locked run oversold or lost an update"
((locked_status == 0)) || fail "the locked run failed (exit $locked_status)"
[[ -n $reactive_result ]] || fail "the locked-reactive run printed no RESULT (exit $reactive_status)"
[[ $reactive_result == *" oversold=0 lost_updates=0 "* ]] || fail "the locked-reactive run oversold or lost an update"
((reactive_status == 0)) || fail "the locked-reactive run failed (exit $reactive_status)"
[[ -n $condition_line ]] || fail "the producers and consumers printed no CONDITION line (exit $condition_status)"
[[ $(result_field "$condition_line" produced) == "$condition_items" && $(result_field "$condition_line" consumed) == "$condition_items" ]] ||
	fail "the order queue did not move every item: $condition_items items, $(result_field "$condition_line" produced) produced, $(result_field "$condition_line" consumed) consumed"
[[ $(result_field "$condition_line" duplicates) == 0 && $(result_field "$condition_line" lost) == 0 ]] ||
	fail "the order queue gave an item twice or lost one (duplicates=$(result_field "$condition_line" duplicates) lost=$(result_field "$condition_line" lost))"
((condition_status == 0)) || fail "the producer/consumer run failed (exit $condition_status)"
if ((no_handoff_run)); then
	no_handoff_result=$(grep '^RESULT ' "$work/load-locked-no-handoff.log" || true)
	[[ -n $no_handoff_result ]] || fail "the locked-no-handoff run printed no RESULT (exit $no_handoff_status)"
	[[ $no_handoff_result == *" oversold=0 lost_updates=0 "* ]] ||
		fail "the locked-no-handoff run oversold or lost an update"
	((no_handoff_status != 4)) ||
		fail "the locked-no-handoff run handed grants over locally: zk.lock.local-handoff.enabled=false did not apply"
	((no_handoff_status == 0)) || fail "the locked-no-handoff run failed (exit $no_handoff_status)"
fi
((scheduled_status == 0)) || fail "a scheduled job ran a tick on more than one instance, or never ran (exit $scheduled_status)"
[[ -n $unlocked_result ]] || fail "the unlocked run printed no RESULT (exit $unlocked_status)"
((unlocked_status == 0)) || fail "the unlocked run failed (exit $unlocked_status)"
check_tls
check_dashboard
if [[ $unlocked_result == *" oversold=0 lost_updates=0 "* ]]; then
	echo "Note: the unlocked run happened not to interleave this time; try --think-time 5 or more concurrency."
else
	echo "The lock made the difference: the unlocked run oversold or lost updates, the locked runs did not."
fi
