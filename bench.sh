#!/usr/bin/env bash
# Runs the zk-lock benchmarks (module zk-lock-benchmarks; see BENCHMARKS.md for what they measure).
#
#   ./bench.sh            full run: 3 rounds, every benchmark in a fresh JVM each round
#   ./bench.sh --quick    1 round, short iterations: under 5 minutes on two cores
#
# Other options go to the runner (io.github.zklock.benchmarks.run.BenchMain):
#   --rounds N                 rounds of the JMH benchmarks (each runs every benchmark once)
#   --include REGEX            only the JMH benchmarks matching REGEX (e.g. 'Uncontended.*Mutex')
#   --connect-string H:P       run the JMH scenarios against this ZooKeeper server instead of an
#                              in-process one per fork (the request and memory scenarios always use
#                              their own in-process server)
#   --fsync                    let the in-process server fsync its transaction log (off by default)
#   --prof NAME                add a JMH profiler, e.g. stack or gc
#   --skip jmh,requests,memory skip scenarios
#   --no-build                 use the classes built by an earlier run
#
# Prints the tables, then one "RATIO name=value" line per ratio and one "REQUESTS ..." line per
# lock kind, last. Everything it writes goes below target/ (results in
# zk-lock-benchmarks/target/bench/). Every process it starts is stopped on exit or Ctrl-C. The
# in-process servers listen on 127.0.0.1 only. JAVA_HOME selects the JDK.
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD
module=zk-lock-benchmarks
work=$root/$module/target/bench
java=${JAVA_HOME:+$JAVA_HOME/bin/}java

build=true
args=()
for arg in "$@"; do
	case $arg in
		--no-build) build=false ;;
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

rm -rf "$work/zookeeper" "$work/tmp"
mkdir -p "$work/tmp"

runner=
stop_runner() {
	if [[ -n $runner ]] && kill -0 "$runner" 2>/dev/null; then
		# The runner, its JMH forks and the memory scenario's JVM share one process group.
		kill -TERM -- "-$runner" 2>/dev/null || true
		sleep 2
		kill -KILL -- "-$runner" 2>/dev/null || true
	fi
}
trap stop_runner EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

set -m # the runner gets a process group of its own
"$java" -Xms256m -Xmx512m -XX:-UsePerfData -Djava.io.tmpdir="$work/tmp" \
	-cp "$root/$module/target/classes:$(cat "$module/target/benchmark-classpath.txt")" \
	io.github.zklock.benchmarks.run.BenchMain --work-dir "$work" "${args[@]}" &
runner=$!
set +m
status=0
wait "$runner" || status=$?
runner=
exit "$status"
