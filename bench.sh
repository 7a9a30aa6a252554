#!/usr/bin/env bash
# Runs the zk-lock benchmarks (module zk-lock-benchmarks; see BENCHMARKS.md for what they measure).
#
#   ./bench.sh            full run: 3 rounds, every benchmark in a fresh JVM each round
#   ./bench.sh --quick    1 round, short iterations: about 5 minutes on two cores
#   ./bench.sh --scale    only the scale scenario: a million keys locked once each by 3 application
#                         JVMs, flat then deep layout, against the server's create+delete floor
#
# Other options go to the runner (io.github.zklock.benchmarks.run.BenchMain):
#   --rounds N                 rounds of the JMH benchmarks (each runs every benchmark once)
#   --include REGEX            only the JMH benchmarks matching REGEX (e.g. 'Uncontended.*Mutex')
#   --connect-string H:P       run the JMH and hot-key scenarios against this ZooKeeper server
#                              instead of an in-process one (the request and memory scenarios always
#                              use their own in-process server)
#   --fsync                    let the in-process server fsync its transaction log (off by default)
#   --prof NAME                add a JMH profiler, e.g. stack or gc
#   --skip jmh,requests,memory,hotkey,redisson
#                              skip scenarios (redisson: only the Redisson contender of the hot key)
#   --hotkey-rounds N          rounds of the hot-key scenario (default 1 quick, 3 full)
#   --hotkey-seconds N         measured seconds per contender and round (default 5 quick, 10 full)
#   --hotkey-contenders A,B    only these contenders of the hot-key scenario (names as in its HOTKEY lines)
#   --hotkey-jfr               a JFR profile of each hot-key JVM: target/bench/hotkey-jvm-N.jfr
#   --redis-server PATH        the redis-server to start (default: the one on the PATH)
#   --scale-keys N             keys per layout of the scale scenario (default 1000000)
#   --scale-threads N          threads per JVM of the scale scenario (default 16)
#   --scale-api NAME           annotation (default: @DistributedLock), template (LockTemplate with a
#                              named request) or template-key (LockTemplate.execute(key, ...), whose
#                              request is named after its key)
#   --scale-tenants N          tenants of the deep layout /tenant/<t>/order/<n> (default 100)
#   --scale-floor-keys N       create+delete cycles of the floor per layout (default min(keys, 100000))
#   --scale-warm-up-keys N     keys of each JVM's warm-up per layout and of its floor's (default 1000)
#   --scale-cache-capacity N   zk.lock.cache-capacity of the applications (default 10000, the starter's)
#   --scale-reap-interval-ms N znode.container.checkIntervalMs of the server (default 30000)
#   --scale-reap-max-per-minute N
#                              znode.container.maxPerMinute of the server (default 6000000; ZooKeeper's
#                              own default, 10000, would take 100 minutes for a million)
#   --scale-reap-wait-seconds N
#                              longest wait for the reaper after each layout (default 900)
#   --scale-server-heap SIZE   heap of the scale scenario's server JVM (default 3g)
#   --scale-client-compiler    the scale scenario's JVMs with the client compiler alone (-XX:TieredStopAtLevel=1):
#                              they start in half the time and run slower (for tests of the scenario)
#   --no-build                 use the classes built by an earlier run
#   --call-trace               instead of the benchmarks: trace one synchronous @DistributedLock call
#                              through zk-lock's methods with JFR method tracing (needs JDK 25:
#                              JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 ./bench.sh --call-trace)
#
# The hot-key scenario compares with Redisson against a redis-server that the runner starts on a
# free port of 127.0.0.1, without persistence. When none is on the PATH, this script installs the
# Debian package redis-server (apt-get, as root or through sudo -n); when it cannot, it says so and
# only the Redisson lines are left out.
#
# Prints the tables, then one "HOTKEY ..." line per hot-key contender, one "RATIO name=value" line
# per ratio and one "REQUESTS ..." line per lock kind, last. A complete run (without --skip,
# --include, --connect-string or --prof) also replaces the published figures,
# zk-lock-benchmarks/results/latest.properties (with the machine, its load and whether fsync was on),
# which README.md, the guide and BENCHMARKS.md quote, and draws them as charts in
# zk-lock-benchmarks/results/charts/ (shown by the guide's Benchmarks chapter). Everything else it
# writes goes below target/ (zk-lock-benchmarks/target/bench/). Every process it starts (the runner, its JVMs,
# redis-server) is stopped on exit or Ctrl-C. The servers listen on 127.0.0.1 only. JAVA_HOME
# selects the JDK.
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD
module=zk-lock-benchmarks
work=$root/$module/target/bench
results=$root/$module/results
java=${JAVA_HOME:+$JAVA_HOME/bin/}java

build=true
call_trace=false
args=()
for arg in "$@"; do
	case $arg in
		--no-build) build=false ;;
		--call-trace) call_trace=true ;;
		-h | --help)
			sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
			exit 0
			;;
		*) args+=("$arg") ;;
	esac
done

started=$SECONDS
if $build; then
	echo "Building zk-lock and its benchmarks (tests skipped)..."
	./mvnw -B -q -pl "$module" -am package -DskipTests
	echo "Built in $((SECONDS - started)) s."
fi
if [[ ! -f $module/target/benchmark-classpath.txt ]]; then
	echo "The benchmarks are not built: run ./bench.sh without --no-build" >&2
	exit 1
fi

rm -rf "$work/zookeeper" "$work/tmp" "$work/redis"
mkdir -p "$work/tmp"
touch "$work/started"

if $call_trace; then
	exec "$java" -Xmx512m -Djava.io.tmpdir="$work/tmp" \
		-cp "$root/$module/target/classes:$(cat "$module/target/benchmark-classpath.txt")" \
		io.github.zklock.benchmarks.run.CallTrace
fi

# redis-server for the hot-key scenario's Redisson contender, unless skipped or given.
want_redis=true
previous=
for arg in ${args[@]+"${args[@]}"}; do
	if [[ $previous == --skip && ($arg == *hotkey* || $arg == *redisson*) ]] || [[ $previous == --redis-server ]] ||
		[[ $arg == --scale ]]; then
		want_redis=false
	fi
	previous=$arg
done
if $want_redis && ! command -v redis-server >/dev/null; then
	echo "redis-server is not on the PATH: installing the Debian package redis-server (log: $work/apt-redis.log)..."
	as_root=()
	if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	fi
	if command -v apt-get >/dev/null && { [[ $(id -u) -eq 0 ]] || [[ ${#as_root[@]} -gt 0 ]]; }; then
		{
			${as_root[@]+"${as_root[@]}"} apt-get install -y -q redis-server ||
				{ ${as_root[@]+"${as_root[@]}"} apt-get update -q &&
					${as_root[@]+"${as_root[@]}"} apt-get install -y -q redis-server; }
		} >"$work/apt-redis.log" 2>&1 || true
	else
		echo "apt-get is missing, or this user is not root and has no password-less sudo." >"$work/apt-redis.log"
	fi
	if command -v redis-server >/dev/null; then
		echo "Installed: $(redis-server --version)"
	else
		echo "WARNING: redis-server could not be installed ($(tail -n 1 "$work/apt-redis.log")): the Redisson" \
			"lines of the hot-key scenario are skipped (everything else runs)." >&2
	fi
fi

group=
stop_group() {
	# The runner, its JMH forks, the memory and hot-key scenarios' JVMs and the redis-server it
	# starts share one process group: stop whatever of it is still running.
	if [[ -n $group ]] && kill -0 -- "-$group" 2>/dev/null; then
		kill -TERM -- "-$group" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 -- "-$group" 2>/dev/null || return 0
			sleep 0.2
		done
		kill -KILL -- "-$group" 2>/dev/null || true
	fi
}
trap stop_group EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

set -m # the runner gets a process group of its own
"$java" -Xms256m -Xmx512m -XX:-UsePerfData -Djava.io.tmpdir="$work/tmp" \
	-cp "$root/$module/target/classes:$(cat "$module/target/benchmark-classpath.txt")" \
	io.github.zklock.benchmarks.run.BenchMain --work-dir "$work" --publish-results "$results/latest.properties" \
	${args[@]+"${args[@]}"} &
group=$!
set +m
status=0
wait "$group" || status=$?
if ((status == 0)) && [[ $results/latest.properties -nt $work/started ]]; then
	# A complete run replaced the published figures: draw them.
	"$java" -Xmx256m -cp "$root/$module/target/classes:$(cat "$module/target/benchmark-classpath.txt")" \
		io.github.zklock.benchmarks.run.Charts "$results/latest.properties" "$results/charts" || status=$?
fi
exit "$status"
