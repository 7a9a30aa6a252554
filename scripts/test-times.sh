#!/usr/bin/env bash
# Where a build's test time goes: reads the surefire reports a build left (every
# <module>/target/surefire-reports/TEST-*.xml below the directory given, the consumer build's
# src/it application included) and prints
#   - the slowest test classes (30 unless --top says otherwise): seconds, tests, module, class;
#   - per module: the test classes, the test methods run (skipped ones apart), the sum of the
#     classes' seconds and, when the build's Maven log is given, the module's wall time from the
#     reactor summary (tests, compilation, javadoc and packaging);
#   - the totals, and the build's own wall time from the log (Maven's "Total time").
# A class's seconds are surefire's (its JVM's time in that class, its servers' start included);
# a module whose classes run in several test JVMs at a time waits less than its sum, and the
# reactor builds several modules at a time (-T, .mvn/maven.config), so that the build takes less
# than the sum of its modules' times.
#
# Usage: scripts/test-times.sh [--top N] [--log MAVEN_LOG] [DIR]
#   DIR   the build's directory (default: the repository)
# Example: ./mvnw -B verify | tee build.log; scripts/test-times.sh --log build.log
set -euo pipefail

top=30
log=
dir=
while (($# > 0)); do
	case "$1" in
		--top) top=$2; shift 2 ;;
		--log) log=$2; shift 2 ;;
		-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "Unknown option $1 (see --help)" >&2; exit 2 ;;
		*) dir=$1; shift ;;
	esac
done
dir=${dir:-$(cd "$(dirname "$0")/.." && pwd)}
[[ -z "${log}" || -r "${log}" ]] || { echo "Cannot read the Maven log ${log}" >&2; exit 2; }

mapfile -t reports < <(find "${dir}" -path '*/target/surefire-reports/TEST-*.xml' -not -path '*/it-repo/*' | sort)
if ((${#reports[@]} == 0)); then
	echo "No surefire reports below ${dir}: run the build first" >&2
	exit 1
fi

# One line per class: module, class, seconds, tests, skipped, failures+errors.
rows=$(for report in "${reports[@]}"; do
	module=${report#"${dir}"/}
	module=${module%%/target/surefire-reports/*}
	sed -n '/<testsuite /{
		s/.* name="\([^"]*\)".* time="\([0-9.,]*\)".* tests="\([0-9]*\)".* errors="\([0-9]*\)".* skipped="\([0-9]*\)".* failures="\([0-9]*\)".*/\1 \2 \3 \4 \5 \6/p
		q
	}' "${report}" | awk -v module="${module}" '{ gsub(",", "", $2); print module, $1, $2, $3, $5, $4 + $6 }'
done)

echo "SLOWEST CLASSES (top ${top})"
printf '%9s %6s  %-40s %s\n' seconds tests module class
sort -k3,3 -g -r <<<"${rows}" | head -n "${top}" \
	| awk '{ printf "%9.1f %6d  %-40s %s\n", $3, $4, $1, $2 }'

# Module wall times from the reactor summary ("[INFO] zk-lock core .... SUCCESS [16:51 min]").
declare -A wall=()
if [[ -n "${log}" ]]; then
	while IFS=$'\t' read -r name seconds; do
		wall["${name}"]=${seconds}
	done < <(sed -n 's/^.*\[INFO\] \(.*[^ .]\) \.\.*[ ]*\(SUCCESS\|FAILURE\) \[ *\([^]]*\)\]$/\1\t\3/p' "${log}" \
		| awk -F'\t' '{
			t = $2; s = 0
			if (t ~ /min$/) { sub(/ min$/, "", t); n = split(t, p, ":"); s = p[1] * 60 + p[2] }
			else if (t ~ /h$/) { sub(/ h$/, "", t); n = split(t, p, ":"); s = p[1] * 3600 + p[2] * 60 + p[3] }
			else { sub(/ s$/, "", t); s = t }
			printf "%s\t%d\n", $1, s
		}')
fi

# The reactor summary names modules by their <name>; map each module directory to it.
module_name() {
	# The consumer build's application (<module>/target/it/...) waits within its module's time.
	local pom="${dir}/${1%%/target/it/*}/pom.xml"
	[[ -f "${pom}" ]] || return 0
	sed -n '/<parent>/,/<\/parent>/d; s/^ *<name>\(.*\)<\/name>.*/\1/p' "${pom}" | head -n 1
}

echo
echo "MODULES"
printf '%-50s %7s %7s %7s %11s %9s\n' module classes tests skipped sum_seconds wall
total_classes=0 total_tests=0 total_skipped=0 total_failed=0 total_sum=0 total_wall=0
while read -r module classes tests skipped failed sum; do
	name=$(module_name "${module}")
	name=${name:-${module}}
	w=${wall["${name}"]:-}
	printf '%-50s %7d %7d %7d %11.1f %9s\n' "${module}" "${classes}" "${tests}" "${skipped}" "${sum}" "${w:+${w} s}"
	total_classes=$((total_classes + classes))
	total_tests=$((total_tests + tests))
	total_skipped=$((total_skipped + skipped))
	total_failed=$((total_failed + failed))
	total_sum=$(awk -v a="${total_sum}" -v b="${sum}" 'BEGIN { print a + b }')
	total_wall=$((total_wall + ${w:-0}))
done < <(awk '{ c[$1]++; t[$1] += $4; s[$1] += $5; f[$1] += $6; sec[$1] += $3 }
	END { for (m in c) print m, c[m], t[m], s[m], f[m], sec[m] }' <<<"${rows}" | sort)

echo
printf 'TOTAL classes=%d tests=%d run=%d skipped=%d failed=%d sum_seconds=%.0f' \
	"${total_classes}" "${total_tests}" "$((total_tests - total_skipped))" "${total_skipped}" "${total_failed}" "${total_sum}"
if [[ -n "${log}" ]]; then
	# A parallel build (-T) says "(Wall Clock)" after its total; its modules' times overlap, so
	# that their sum is more than the build's.
	total=$(sed -n 's/^.*\[INFO\] Total time: *\(.*\)$/\1/p' "${log}" | tail -n 1 | sed 's/ *(Wall Clock)$//')
	printf ' modules_seconds_summed=%d maven_total_time="%s"' "${total_wall}" "${total}"
fi
echo
