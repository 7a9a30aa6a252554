#!/usr/bin/env bash
# The fault campaign: a real ZooKeeper ensemble (Debian's zookeeper package, 3 or 5 servers as
# unprivileged processes on 127.0.0.1, fsync on), every link of it (server to server, instance to
# server) through a TCP proxy that a partition cuts; the sample app in 3 JVMs (profile chaos) on a
# PostgreSQL server (scripts/database-server.sh); clients running seven workloads (a fenced counter,
# the same counter unfenced, the fenced counter through asynchronous grants, transfers under a
# multi-lock, the stock sale, the reactive stock sale on R2DBC fenced by R2dbcLockFence, the
# @LeaderOnly report job) and recording every operation; and a
# nemesis that injects, on a schedule drawn from the seed, partitions (the leader isolated, a
# minority of followers, an instance cut off from every server), SIGSTOP/SIGCONT of a holder past
# its session timeout, SIGKILL of the leader, of a follower and of an instance, jumps of an
# instance's wall clock (libfaketime) forward and backward, and CPU starvation of an instance
# (stress-ng). Each fault is healed, and the system awaited back, before the next. After the faults,
# 10 s of quiet load; then the checkers read the database against the recorded history.
#
# The report (also target/chaos/report.txt): one FAULT line per fault; per fault kind how many were
# injected and how long the fenced counter's key (one key every instance takes) went without a
# success after each, p50/p99 against the session timeout; per workload the operations (ok, failed,
# unknown; the @LeaderOnly job's: the committed runs its checker examined) and the violations its
# checker found; and a last line a script can read:
#   CAMPAIGN seed=… minutes=… servers=… … faults=… kinds=… operations=… violations=… unfenced_violations=…
# operations is the workloads' sum; violations counts the fenced workloads' (every workload but the
# unfenced counter). Also written:
# target/chaos/throughput.png (successes per second over time, faults marked), history.csv, and every
# process's log.
# A Prometheus server (scripts/prometheus-server.sh: Debian's prometheus, installed when missing; on
# the loopback address, its data in target/chaos/prometheus) scrapes every instance's
# /actuator/prometheus every 2 s with the alert rules of monitoring/prometheus loaded; the report
# adds, before its per-kind lines and its CAMPAIGN line (still the last), a PROMETHEUS line
# (targets up, samples scraped) and per fault kind a PROMETHEUS_FAULT line:
# over the time its faults lasted, the grants' lock wait p99 and the grants lost per minute, from
# PromQL queries against the run's data. Where Prometheus cannot be installed or run, the campaign
# runs without it and says so.
#
# Usage: ./chaos.sh [--minutes N] [--seed S] [--servers 3|5] [--session-timeout MS] [--keep] [--publish]
#                   [--no-prometheus | --prometheus-keep]
#   --minutes  how long faults are started for (default 2; the cycle under way is finished, so that
#              every kind is injected at least once)
#   --seed     the schedule's seed (default 1): the same seed gives the same faults in the same order
#   --servers  ZooKeeper servers (default 3)
#   --session-timeout  the instances' zk.lock.session-timeout in milliseconds (default 3000)
#   --keep     the instances keep their lock znodes after use until another participant asks
#              (zk.lock.keep.enabled=true; kept_locks=on in the CAMPAIGN line)
#   --publish  copy the report, the chart and the faults to zk-lock-chaos/results/ (with --keep,
#              zk-lock-chaos/results/kept/), which the guide shows
#   --no-prometheus    start no Prometheus server (no PROMETHEUS lines)
#   --prometheus-keep  leave the Prometheus server running after the campaign, to browse its data
#
# Builds the sample app and the campaign first when their jar or classes are missing or older than
# a main source or a pom of the build.
#
# Installs what it needs when missing (apt-get, as root): zookeeper, libfaketime, stress-ng,
# postgresql. Without libfaketime or stress-ng the clock and CPU faults are skipped (the report says
# so). Writes only below target/ directories. Exit status: 0 no violation in a fenced workload and
# the system came back after every fault; 1 a fenced workload's checker found a violation; 2 the
# system did not come back after a fault within 90 s; 3 it could not be set up.
set -euo pipefail

root=$(cd "$(dirname "$0")" && pwd)
cd "$root"
arguments=()
publish=0
results=zk-lock-chaos/results
prometheus=1
prometheus_keep=0
while (($#)); do
	case $1 in
		--minutes | --seed | --servers | --session-timeout)
			(($# >= 2)) || { echo "chaos.sh: $1 needs a value" >&2; exit 3; }
			arguments+=("$1" "$2")
			shift 2
			;;
		--keep)
			arguments+=(--keep true)
			results=zk-lock-chaos/results/kept
			shift
			;;
		--publish)
			publish=1
			shift
			;;
		--no-prometheus)
			prometheus=0
			shift
			;;
		--prometheus-keep)
			prometheus_keep=1
			shift
			;;
		-h | --help)
			sed -n '2,/^set -euo/p' "$0" | sed -n 's/^# \{0,1\}//p'
			exit 0
			;;
		*)
			echo "chaos.sh: unknown option $1 (see --help)" >&2
			exit 3
			;;
	esac
done

work=$root/target/chaos
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
pg_dir=$work/postgres
pg_started=0
prom_dir=$work/prometheus
prom_started=0
if ((prometheus_keep && !prometheus)); then
	echo "chaos.sh: --prometheus-keep keeps the Prometheus server that --no-prometheus leaves out; choose one" >&2
	exit 3
fi

cleanup() {
	local status=$?
	if ((pg_started)); then
		STOP_TIMEOUT=20 scripts/database-server.sh stop postgres "$pg_dir" >>"$work/postgres-server.log" 2>&1 || true
	fi
	if ((prom_started)); then
		if ((prometheus_keep)); then
			echo "Prometheus keeps running on http://127.0.0.1:$prom_port with the campaign's data (stop it with: scripts/prometheus-server.sh stop ${prom_dir#"$root"/})"
		else
			STOP_TIMEOUT=20 scripts/prometheus-server.sh stop "$prom_dir" >>"$work/prometheus-server.log" 2>&1 || true
		fi
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'echo "Interrupted"; exit 130' INT
trap 'exit 143' TERM

# Install Debian packages that are missing (as root, non-interactive).
install_packages() {
	local missing=() package
	for package in "$@"; do
		dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
	done
	((${#missing[@]})) || return 0
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		echo "chaos.sh: ${missing[*]} missing and cannot be installed here (needs root and apt-get)" >&2
		return 1
	fi
	echo "Installing ${missing[*]} (Debian packages)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_packages zookeeper || exit 3
install_packages libfaketime stress-ng || echo "chaos.sh: going on without them; their faults are skipped" >&2

# A Prometheus server of an earlier campaign (kept, or left by a kill) would outlive its directory.
[[ ! -f $prom_dir/prometheus.pid ]] || scripts/prometheus-server.sh stop "$prom_dir" >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work"

jar=zk-lock-sample-app/target/zk-lock-sample-app.jar
classpath_file=zk-lock-chaos/target/campaign-classpath.txt
if [[ ! -f $jar || ! -f $classpath_file ]] ||
	[[ -n $(find pom.xml zk-lock-*/pom.xml zk-lock-*/src/main -newer "$jar" -print -quit) ]] ||
	[[ -n $(find pom.xml zk-lock-*/pom.xml zk-lock-*/src/main -newer "$classpath_file" -print -quit) ]]; then
	echo "Building the sample app and the campaign (./mvnw, no tests)"
	./mvnw -B -q install -DskipTests -Dinvoker.skip=true -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
		-pl zk-lock-sample-app,zk-lock-chaos -am >"$work/build.log" 2>&1 || { tail -n 20 "$work/build.log" >&2; exit 3; }
fi

pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "Starting PostgreSQL on 127.0.0.1:$pg_port (scripts/database-server.sh)"
status=0
scripts/database-server.sh start postgres "$pg_dir" "$pg_port" >>"$work/postgres-server.log" 2>&1 || status=$?
if ((status != 0)); then
	tail -n 3 "$work/postgres-server.log" >&2
	echo "chaos.sh: PostgreSQL did not start (exit $status)" >&2
	exit 3
fi
pg_started=1

# Prometheus scrapes the instances that the campaign lists in targets.json (the sample's default
# admin password: the campaign's instances set none).
prom_arguments=()
if ((prometheus)); then
	prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	scripts/prometheus-server.sh config "$prom_dir" admin-demo-only
	echo "Starting Prometheus on 127.0.0.1:$prom_port (scripts/prometheus-server.sh)"
	status=0
	scripts/prometheus-server.sh start "$prom_dir" "$prom_port" "$prom_dir/prometheus.yml" >>"$work/prometheus-server.log" 2>&1 || status=$?
	if ((status == 0)); then
		prom_started=1
		prom_arguments=(--prometheus "http://127.0.0.1:$prom_port" --prometheus-targets "$prom_dir/targets.json")
	elif ((status == 3)); then
		echo "chaos.sh: Prometheus cannot be installed or run here ($(tail -n 1 "$work/prometheus-server.log")); the campaign runs without it" >&2
	else
		tail -n 3 "$work/prometheus-server.log" >&2
		echo "chaos.sh: Prometheus did not start (exit $status)" >&2
		exit 3
	fi
fi

status=0
"$java" -Xmx512m -cp "zk-lock-chaos/target/classes:$(cat "$classpath_file")" \
	io.github.zklock.chaos.Campaign --jar "$jar" --java "$java" \
	--db-server "jdbc:postgresql://127.0.0.1:$pg_port/" --work "$work" "${arguments[@]}" "${prom_arguments[@]}" || status=$?
if ((publish)) && [[ -f $work/report.txt ]]; then
	mkdir -p "$results"
	cp "$work/report.txt" "$work/throughput.png" "$work/faults.csv" "$results/"
	echo "Published: $results/report.txt, throughput.png, faults.csv"
fi
exit "$status"
