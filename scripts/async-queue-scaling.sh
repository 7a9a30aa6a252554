#!/usr/bin/env bash
# How the drain of queued asynchronous grants grows with their number: for each N, the memory
# scenario's AsyncQueueFootprint (another application holds the key, this one queues N requests
# through LockTemplate.async(), then the holder lets go) in a JVM of its own, against one standalone
# ZooKeeper server started here (the library's server jars, fsync off as in ./bench.sh --quick, a
# free port of 127.0.0.1). Prints the ASYNC_QUEUE line of each run; drain_seconds is the time from
# the holder's release until the last of the N is granted. Runs the sizes in the order given (the
# server's JIT warms over the runs: give the first size twice to see it).
#
# Usage: scripts/async-queue-scaling.sh [exclusive|permit] [N ...]   (default: permit 500 1000 2000 4000 8000)
# Builds zk-lock-benchmarks (no tests) when its classes are missing. The server is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-permit}
shift || true
sizes=("$@")
if ((${#sizes[@]} == 0)); then
	sizes=(500 1000 2000 4000 8000)
fi
module=zk-lock-benchmarks
if [[ ! -f $module/target/benchmark-classpath.txt || ! -d $module/target/classes ]]; then
	./mvnw -B -q -pl "$module" -am package -DskipTests -Dmaven.javadoc.skip=true
fi
classpath="$module/target/classes:$(cat "$module/target/benchmark-classpath.txt")"
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

server_pid=
stop_server() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$data"
}
trap stop_server EXIT

"$java" -Xmx512m -Dzookeeper.forceSync=no -Dzookeeper.admin.enableServer=false \
	-Dzookeeper.4lw.commands.whitelist=ruok -cp "$classpath" \
	org.apache.zookeeper.server.ZooKeeperServerMain "$port" "$data" 2000 > "$data.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 60); do
	if reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$port" && echo ruok >&3 && timeout 2 cat <&3) 2>/dev/null) \
		&& [[ $reply == imok ]]; then
		break
	fi
	sleep 0.5
done

run=0
for n in "${sizes[@]}"; do
	run=$((run + 1))
	"$java" -Xms256m -Xmx512m -XX:+UseSerialGC -cp "$classpath" \
		io.github.zklock.benchmarks.run.AsyncQueueFootprint "127.0.0.1:$port" "$n" "/scaling-$run" "$kind" \
		| grep '^ASYNC_QUEUE '
done
