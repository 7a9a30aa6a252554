#!/usr/bin/env bash
# Shows what the systematic tests of the local queue and the condition (LocalQueueInterleavingTests,
# LocalQueueEndInterleavingTests, KeptLockInterleavingTests and ConditionInterleavingTests in
# zk-lock-interleavings, Lincheck's
# model checker) find when a fix is taken out, or a defect put in. Each patch in scripts/reverts/
# reverts one fix (or plants a defect that the code must not have) and names, on its "Found by:"
# line, the test that should fail with it. For each, the working tree
# is copied (without build output), the patch applied, and that test run; the script prints
# whether it failed, after how long, and the first line of its failure. The copies are removed
# afterwards.
#
# Usage: scripts/interleaving-reverts.sh [schedules [patch ...]]
#   schedules  schedules explored per test (-Dzklock.interleavings; default, or "-": the test's own)
#   patch      the patches to apply, by name without .patch (default: every one)
# Exits non-zero when a test passed with its defect put back (not found within its schedules), or
# when a patch no longer applies to the code (it must then be brought up to date: the fix it takes
# out has moved).
# Needs the project's dependencies in the local Maven repository (any earlier build fetched them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
schedules=${1:-}
[[ "${schedules}" != "-" ]] || schedules=
shift $(($# > 0 ? 1 : 0))
if (($# > 0)); then
	patches=()
	for name in "$@"; do
		patches+=("${root}/scripts/reverts/${name}.patch")
	done
else
	patches=("${root}"/scripts/reverts/*.patch)
fi
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
stale=0
missed=0

for patch in "${patches[@]}"; do
	name=$(basename "${patch}" .patch)
	test=$(sed -n 's/^Found by: //p' "${patch}" | head -1)
	copy="${work}/${name}"
	mkdir -p "${copy}"
	tar --exclude='./.git' --exclude='*/target' -cf - . | tar -xf - -C "${copy}"
	if ! (cd "${copy}" && patch -s -p1 < "${patch}" > "${work}/${name}.patch.log" 2>&1); then
		echo "REVERT ${name}: the patch no longer applies: $(head -n 1 "${work}/${name}.patch.log")"
		stale=1
		rm -rf "${copy}"
		continue
	fi
	args=(-B -q -o -Pinterleavings -pl zk-lock-interleavings test "-Dtest=*InterleavingTests#${test}"
		-Dsurefire.failIfNoSpecifiedTests=false -Dzklock.interleavings.trace=true)
	if [[ -n "${schedules}" ]]; then
		args+=("-Dzklock.interleavings=${schedules}")
	fi
	start=${SECONDS}
	if (cd "${copy}" && ./mvnw "${args[@]}" > "${work}/${name}.log" 2>&1); then
		outcome=passed
		missed=1
	else
		outcome=failed
	fi
	reports="${copy}/zk-lock-interleavings/target/surefire-reports"
	seconds=$(sed -n 's/.*<testcase name="'"${test}"'"[^>]* time="\([0-9.]*\)".*/\1/p' \
		"${reports}"/TEST-io.github.zklock.curator.*InterleavingTests.xml 2>/dev/null | head -1 || true)
	# Lincheck's verdict ("= Concurrent test failed =", "= The execution has hung =") and the
	# assertion that failed, if any.
	why=$(grep -h -m2 -E '^= .* =$|AssertionError: .+' "${reports}"/*.txt 2>/dev/null \
		| tr '\n' ' ' || true)
	# The schedule that found it: the test prints a line as each starts (the model checker runs the
	# failing one again to print its interleaving, so this may count one or two more).
	at=$(grep -c '^SCHEDULE-STARTED' "${work}/${name}.log" || true)
	echo "REVERT ${name}: ${test} ${outcome} at schedule ${at} after ${seconds:-?} s of exploring ($((SECONDS - start)) s in all) ${why}"
	rm -rf "${copy}"
done
# Non-zero when a patch no longer applies, or when a test passed with its defect put back.
((stale == 0 && missed == 0))
