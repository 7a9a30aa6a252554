#!/usr/bin/env bash
# Shows what the systematic tests of the local queue (LocalQueueInterleavingTests, Lincheck's
# model checker) find when a fix is taken out. Each patch in scripts/reverts/ reverts one fix and
# names, on its "Found by:" line, the test that should fail without it. For each, the working tree
# is copied (without build output), the patch applied, and that test run; the script prints
# whether it failed, after how long, and the first line of its failure. The copies are removed
# afterwards.
#
# Usage: scripts/interleaving-reverts.sh [schedules]
#   schedules  schedules explored per test (-Dzklock.interleavings; default: the test's own)
# Needs the project's dependencies in the local Maven repository (any earlier build fetched them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
schedules=${1:-}
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT

for patch in "${root}"/scripts/reverts/*.patch; do
	name=$(basename "${patch}" .patch)
	test=$(sed -n 's/^Found by: //p' "${patch}" | head -1)
	copy="${work}/${name}"
	mkdir -p "${copy}"
	tar --exclude='./.git' --exclude='*/target' -cf - . | tar -xf - -C "${copy}"
	(cd "${copy}" && patch -s -p1 < "${patch}")
	args=(-B -q -o -pl zk-lock-test,zk-lock-core test "-Dtest=LocalQueueInterleavingTests#${test}"
		-Dsurefire.failIfNoSpecifiedTests=false)
	if [[ -n "${schedules}" ]]; then
		args+=("-Dzklock.interleavings=${schedules}")
	fi
	start=${SECONDS}
	if (cd "${copy}" && ./mvnw "${args[@]}" > "${work}/${name}.log" 2>&1); then
		outcome=passed
	else
		outcome=failed
	fi
	xml="${copy}/zk-lock-core/target/surefire-reports/TEST-io.github.zklock.curator.LocalQueueInterleavingTests.xml"
	seconds=$(sed -n 's/.*<testcase name="'"${test}"'"[^>]* time="\([0-9.]*\)".*/\1/p' "${xml}" 2>/dev/null | head -1)
	# Lincheck's verdict ("= Concurrent test failed =", "= The execution has hung =") and the
	# assertion that failed, if any.
	why=$(grep -h -m2 -E '^= .* =$|AssertionError: .+' "${copy}"/zk-lock-core/target/surefire-reports/*.txt 2>/dev/null \
		| tr '\n' ' ' || true)
	echo "REVERT ${name}: ${test} ${outcome} after ${seconds:-?} s of exploring ($((SECONDS - start)) s in all) ${why}"
	rm -rf "${copy}"
done
