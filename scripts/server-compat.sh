#!/usr/bin/env bash
# Runs zk-lock's lock tests against ZooKeeper servers of other versions: for each version, a server
# started in a JVM of its own from that version's jars on Maven Central (standalone, fsync on, on a
# free port of 127.0.0.1), and the client the library brings (Curator 5.9's ZooKeeper 3.9 client)
# connecting to it. The tests: the contract tests of every lock kind (EXCLUSIVE, non-reentrant,
# READ, WRITE, permits), the registry's tests, the znode acquisition's and the requests counted per
# cycle; run through zk-lock-test's ZooKeeperExtension with zklock.test.connect-string set, so a
# test that must stop or restart the in-process server is skipped. Prints one line per version:
#
#   SERVER_COMPAT version=<v> result=<passed|FAILED> tests=<n> failures=<f> errors=<e> skipped=<s> seconds=<t>
#
# Usage: scripts/server-compat.sh [version ...]   (default: 3.8.6 3.9.5)
# Needs Maven Central (the server's jars are fetched once into target/server-compat/). Exit status
# non-zero if any version failed. Every server it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

versions=("$@")
if ((${#versions[@]} == 0)); then
	versions=(3.8.6 3.9.5)
fi
tests='ExclusiveLockRegistryContractTests,NonReentrantExclusiveLockRegistryContractTests,ReadLockRegistryContractTests,WriteLockRegistryContractTests,SemaphoreRegistryContractTests,CuratorLockRegistryTests,ZnodeAcquisitionTests,AsyncRequestCountTests'
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
work=$root/target/server-compat
mkdir -p "$work"

server_pid=
stop_server() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=
	fi
}
trap stop_server EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

failed=0
for version in "${versions[@]}"; do
	dir=$work/$version
	mkdir -p "$dir"
	if [[ ! -f $dir/lib/snappy-java-1.1.10.4.jar ]]; then
		rm -rf "$dir/lib"
		cat > "$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.server-compat</groupId>
  <artifactId>zookeeper-server</artifactId>
  <version>$version</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.zookeeper</groupId>
      <artifactId>zookeeper</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <!-- The server's metrics, an optional dependency of the zookeeper artifact that the server needs. -->
      <groupId>io.dropwizard.metrics</groupId>
      <artifactId>metrics-core</artifactId>
      <version>4.2.40</version>
    </dependency>
    <dependency>
      <!-- Snapshot compression, another optional dependency the server loads. -->
      <groupId>org.xerial.snappy</groupId>
      <artifactId>snappy-java</artifactId>
      <version>1.1.10.4</version>
    </dependency>
  </dependencies>
</project>
EOF
		./mvnw -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/lib" \
			-DincludeScope=runtime
	fi
	rm -rf "$dir/data"
	mkdir -p "$dir/data"
	port=$(free_port)
	# ZooKeeperServerMain <port> <data directory> <tick time>: standalone, fsync on (ZooKeeper's default).
	printf '<configuration><appender name="out" class="ch.qos.logback.core.ConsoleAppender"><encoder><pattern>%%d %%-5level %%logger{20} - %%msg%%n</pattern></encoder></appender><root level="INFO"><appender-ref ref="out"/></root></configuration>\n' > "$dir/logback.xml"
	"$java" -Xmx256m -cp "$dir/lib/*" -Dlogback.configurationFile="$dir/logback.xml" \
		-Dzookeeper.admin.enableServer=false -Dzookeeper.4lw.commands.whitelist=ruok \
		org.apache.zookeeper.server.ZooKeeperServerMain "$port" "$dir/data" 2000 > "$dir/server.log" 2>&1 &
	server_pid=$!
	started=false
	for _ in $(seq 1 60); do
		# "imok" once the server runs (its four-letter word ruok).
		if reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$port" && echo ruok >&3 && timeout 2 cat <&3) 2>/dev/null) \
			&& [[ $reply == imok ]]; then
			started=true
			break
		fi
		if ! kill -0 "$server_pid" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	if ! $started; then
		echo "SERVER_COMPAT version=$version result=FAILED the server did not start (log: $dir/server.log)"
		tail -5 "$dir/server.log"
		stop_server
		failed=1
		continue
	fi
	start=$SECONDS
	result=passed
	# One test JVM (zklock.test.forks=1): the classes share this one server, and the contract
	# classes of the different modes name their keys after the same test methods; run at once in
	# several JVMs, as the core's tests are on their own in-process servers, they took each other's
	# locks (seen in CI with four JVMs).
	if ! ./mvnw -B -pl zk-lock-test,zk-lock-core test "-Dtest=$tests" -Dsurefire.failIfNoSpecifiedTests=false \
		-Dzklock.test.forks=1 "-Dzklock.test.connect-string=127.0.0.1:$port" > "$dir/tests.log" 2>&1; then
		result=FAILED
		failed=1
	fi
	stop_server
	# The sum of the test classes' lines.
	totals=$(grep -E 'Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+, Time elapsed: .* -- in ' \
		"$dir/tests.log" | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+),.*/\1 \2 \3 \4/' \
		| awk '{t+=$1; f+=$2; e+=$3; s+=$4} END {printf "tests=%d failures=%d errors=%d skipped=%d", t, f, e, s}')
	echo "SERVER_COMPAT version=$version result=$result ${totals:-tests=?} seconds=$((SECONDS - start))"
	if [[ $result == FAILED ]]; then
		grep -E '<<< (FAILURE|ERROR)' "$dir/tests.log" | head -10 || true
	fi
done
exit "$failed"
