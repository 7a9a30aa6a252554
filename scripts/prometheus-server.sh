#!/usr/bin/env bash
# A Prometheus server on the loopback address for the demo and the fault campaign, and promtool for
# the alert rules' tests, from Debian's prometheus package.
#
#   scripts/prometheus-server.sh install
#   scripts/prometheus-server.sh config <dir> <password>
#   scripts/prometheus-server.sh start <dir> <port> <config.yml>
#   scripts/prometheus-server.sh stop <dir>
#
# config writes <dir>/prometheus.yml for the sample app's instances, as ./demo.sh and ./chaos.sh
# run them: the job zk-lock-sample-app scrapes /actuator/prometheus every 2 s as the user admin
# (its password in <dir>/admin-password, readable by the owner only) on the targets listed in
# <dir>/targets.json (file service discovery: the caller writes it as the instances start, and the
# server reads it again on change), with the alert rules of monitoring/prometheus loaded; the job
# zookeeper scrapes /metrics on the targets of <dir>/zookeeper-targets.json, where the caller lists
# a ZooKeeper server that serves its own metrics (none by default).
#
# install installs the package when prometheus or promtool is missing (apt-get, non-interactive;
# the package's service is not started: the scripts run the binary themselves). start installs it
# too, starts prometheus on 127.0.0.1:<port> with the configuration given, its data in <dir>/data
# (kept for the next start), its log in <dir>/prometheus.log and its pid in <dir>/prometheus.pid
# (written as soon as the process exists, so that stop finds a server whose start was
# interrupted), and waits until the server answers /-/ready. A server still running from an
# earlier start in <dir> is stopped first. stop ends the server and waits for it; stopping a server
# that does not run succeeds.
#
# Exit codes: 0 done; 3 the server cannot be installed or run here (not root, no apt-get, the
# package cannot be installed), with one line on stderr saying why; any other code a failure.
# Every wait is bounded (START_TIMEOUT, STOP_TIMEOUT seconds; apt waits up to APT_LOCK_TIMEOUT for
# another apt run to finish).
set -euo pipefail

readonly START_TIMEOUT="${START_TIMEOUT:-60}"
readonly STOP_TIMEOUT="${STOP_TIMEOUT:-30}"
readonly APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-300}"
readonly PROGRAM="${0##*/}"

usage() {
	echo "usage: $PROGRAM install | config <dir> <password> | start <dir> <port> <config.yml> | stop <dir>" >&2
	exit 2
}

# fail, unavailable, log and install_package.
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

# prometheus and promtool, from Debian's package when either is missing (apt-get output in a
# temporary file, named in the log line).
install_prometheus() {
	if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
		return
	fi
	[[ $(id -u) == 0 ]] || unavailable "prometheus is not installed and only root can install it"
	install_package prometheus "$(mktemp)"
	command -v prometheus >/dev/null && command -v promtool >/dev/null \
		|| unavailable "the prometheus package has no prometheus or promtool binary"
}

stop_server() {
	local dir="$1" pid
	[[ -f "$dir/prometheus.pid" ]] || return 0
	pid=$(cat "$dir/prometheus.pid")
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		local deadline=$((SECONDS + STOP_TIMEOUT))
		while kill -0 "$pid" 2>/dev/null; do
			if ((SECONDS >= deadline)); then
				kill -9 "$pid" 2>/dev/null || true
				break
			fi
			sleep 0.2
		done
	fi
	rm -f "$dir/prometheus.pid"
}

start_server() {
	local dir="$1" port="$2" config="$3"
	[[ -f "$config" ]] || fail "no configuration file $config"
	install_prometheus
	mkdir -p "$dir/data"
	stop_server "$dir"
	promtool check config "$config" >"$dir/check-config.log" 2>&1 || fail "invalid configuration: $(tail -n 3 "$dir/check-config.log")"
	prometheus --config.file="$config" --storage.tsdb.path="$dir/data" \
		--web.listen-address="127.0.0.1:$port" --web.enable-lifecycle \
		--storage.tsdb.retention.time=7d >"$dir/prometheus.log" 2>&1 &
	echo $! >"$dir/prometheus.pid"
	local deadline=$((SECONDS + START_TIMEOUT))
	until curl -sf --max-time 2 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; do
		if ! kill -0 "$(cat "$dir/prometheus.pid")" 2>/dev/null; then
			rm -f "$dir/prometheus.pid"
			fail "prometheus exited: $(tail -n 3 "$dir/prometheus.log")"
		fi
		((SECONDS < deadline)) || { stop_server "$dir"; fail "prometheus not ready within $START_TIMEOUT s: $(tail -n 3 "$dir/prometheus.log")"; }
		sleep 0.5
	done
	log "prometheus ready on 127.0.0.1:$port (data in $dir/data)"
}

write_config() {
	local dir="$1" password="$2" rules
	rules="$(cd "$(dirname "$0")/.." && pwd)/monitoring/prometheus/zk-lock-alerts.yml"
	mkdir -p "$dir"
	(umask 077; printf '%s' "$password" >"$dir/admin-password")
	[[ -f "$dir/targets.json" ]] || echo '[]' >"$dir/targets.json"
	[[ -f "$dir/zookeeper-targets.json" ]] || echo '[]' >"$dir/zookeeper-targets.json"
	cat >"$dir/prometheus.yml" <<CONFIG
global:
  scrape_interval: 2s
  evaluation_interval: 2s
rule_files:
  - $rules
scrape_configs:
  - job_name: zk-lock-sample-app
    metrics_path: /actuator/prometheus
    basic_auth:
      username: admin
      password_file: $dir/admin-password
    file_sd_configs:
      - files: ['$dir/targets.json']
        refresh_interval: 5s
  - job_name: zookeeper
    metrics_path: /metrics
    file_sd_configs:
      - files: ['$dir/zookeeper-targets.json']
        refresh_interval: 5s
CONFIG
}

case "${1:-}" in
	install) (($# == 1)) || usage; install_prometheus ;;
	config) (($# == 3)) || usage; write_config "$2" "$3" ;;
	start) (($# == 4)) || usage; start_server "$2" "$3" "$4" ;;
	stop) (($# == 2)) || usage; stop_server "$2" ;;
	*) usage ;;
esac
