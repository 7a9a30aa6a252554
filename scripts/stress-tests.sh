#!/usr/bin/env bash
# Runs test classes again and again, each run in a JVM of its own (an isolated run), while
# stress-ng keeps both CPUs busy, so that rare interleavings of the library's threads, ZooKeeper's
# and the tests' show up. Prints one line per run and a count per class at the end:
#
#   STRESS class=<class> run=<n>/<runs> result=<passed|FAILED> tests_passed=<t> seconds=<s>
#   STRESS class=<class> runs=<runs> passed=<p> failed=<f>
#
# A failed run keeps its surefire reports and output in <out>/<class>-<n>/.
#
# Usage: scripts/stress-tests.sh [-n runs] [-o out] [-q] [class ...]
#   -n runs   isolated runs per class (default 30)
#   -o out    where failed runs are kept (default target/stress-tests)
#   -q        quiet: no stress-ng (the same runs on an otherwise idle machine)
#   class     test classes of zk-lock-core or zk-lock-chaos, simple names (default: the classes below)
#
# The default classes: those that failed now and then or were loosened before the local queue was
# rebuilt, the chaos tests (every class tagged "chaos"), and the lock storm (40 s per case here).
# stress-ng is installed from Debian's package when missing (apt-get, non-interactive, as root).
# Builds the modules once (without tests); each run is then a JVM of its own (JUnit's console
# launcher, fetched from Maven Central once), one class per JVM.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=30
out=target/stress-tests
stress=1
while getopts "n:o:q" option; do
	case "${option}" in
		n) runs=${OPTARG} ;;
		o) out=${OPTARG} ;;
		q) stress=0 ;;
		*) sed -n '2,21p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

classes=("$@")
if ((${#classes[@]} == 0)); then
	classes=(RevocationCheckTests AsyncLockModesTests ZnodeAcquisitionTests LockAtMostForTests LockStormTests)
	for file in zk-lock-chaos/src/test/java/io/github/zklock/chaos/*Tests.java; do
		if grep -q '@Tag("chaos")' "${file}"; then
			classes+=("$(basename "${file}" .java)")
		fi
	done
fi

stress_pid=
stop_stress() {
	if [[ -n "${stress_pid}" ]]; then
		kill "${stress_pid}" 2>/dev/null || true
		wait "${stress_pid}" 2>/dev/null || true
	fi
}
trap stop_stress EXIT

if ((stress)); then
	if ! command -v stress-ng > /dev/null; then
		echo "Installing stress-ng (Debian package)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng > /dev/null
	fi
	stress-ng --cpu 2 --quiet &
	stress_pid=$!
fi

./mvnw -B -q install -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -Dinvoker.skip=true \
	-pl zk-lock-test,zk-lock-core,zk-lock-chaos -am
# Each run is a JVM of its own started directly with JUnit's console launcher (a Maven start per
# run would cost more than most of the runs), on its module's test class path.
modules=(zk-lock-core zk-lock-chaos)
./mvnw -B -q -pl "$(IFS=,; echo "${modules[*]}")" dependency:build-classpath -Dmdep.includeScope=test \
	-Dmdep.outputFile=target/stress-classpath.txt
platform=$(tr ':' '\n' < zk-lock-core/target/stress-classpath.txt | sed -n 's|.*/junit-platform-engine-\(.*\)\.jar$|\1|p' | head -1)
launcher=zk-lock-core/target/stress-launcher/junit-platform-console-standalone-${platform}.jar
if [[ ! -f "${launcher}" ]]; then
	./mvnw -B -q -pl zk-lock-core dependency:copy \
		"-Dartifact=org.junit.platform:junit-platform-console-standalone:${platform}" \
		-DoutputDirectory=target/stress-launcher
fi
mkdir -p "${out}"
summary=()
for class in "${classes[@]}"; do
	passed=0
	failed=0
	for ((run = 1; run <= runs; run++)); do
		start=${SECONDS}
		log="${out}/${class}.log"
		reports="${out}/reports"
		rm -rf "${reports}"
		module=
		for candidate in "${modules[@]}"; do
			if [[ -n "$(find "${candidate}/src/test/java" -name "${class}.java" | head -1)" ]]; then
				module=${candidate}
				break
			fi
		done
		[[ -n "${module}" ]] || { echo "stress-tests.sh: no test class ${class} in ${modules[*]}" >&2; exit 2; }
		class_name=$(cd "${module}/src/test/java" && find . -name "${class}.java" | head -1 | sed 's|^\./||; s|\.java$||; s|/|.|g')
		classpath="${module}/target/test-classes:${module}/target/classes:$(cat "${module}/target/stress-classpath.txt"):${launcher}"
		if java -Dzklock.storm.seconds=40 -cp "${classpath}" org.junit.platform.console.ConsoleLauncher execute \
				--disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
				--select-class "${class_name}" --reports-dir "${reports}" > "${log}" 2>&1; then
			result=passed
			passed=$((passed + 1))
		else
			result=FAILED
			failed=$((failed + 1))
			kept="${out}/${class}-${run}"
			mkdir -p "${kept}"
			cp "${log}" "${kept}/"
			cp -r "${reports}" "${kept}/" 2>/dev/null || true
		fi
		tests=$(sed -n 's/^\[ *\([0-9]*\) tests successful.*/\1/p' "${log}" | head -1)
		echo "STRESS class=${class} run=${run}/${runs} result=${result} tests_passed=${tests:-0} seconds=$((SECONDS - start))"
	done
	summary+=("STRESS class=${class} runs=${runs} passed=${passed} failed=${failed}")
done
printf '%s\n' "${summary[@]}"
