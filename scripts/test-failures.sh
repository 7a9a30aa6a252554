#!/usr/bin/env bash
# The tests a build failed, from the surefire and failsafe reports it left (every
# <module>/target/{surefire,failsafe}-reports/TEST-*.xml below the directory given): per failed or
# erroneous test method its module, class and method, the exception's type and message, and the
# first lines of its stack trace. CI prints this after its summary, where the end of its output
# shows it, however long the builds' logs before it.
#
# Usage: scripts/test-failures.sh [--lines N] [DIR]
#   DIR      the build's directory (default: the repository)
#   --lines  lines of each stack trace (default 12)
# Exit status: 0 when no report records a failure, 1 when one does.
set -euo pipefail

lines=12
dir=
while (($# > 0)); do
	case "$1" in
		--lines) lines=$2; shift 2 ;;
		-h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "Unknown option $1 (see --help)" >&2; exit 2 ;;
		*) dir=$1; shift ;;
	esac
done
dir=${dir:-$(cd "$(dirname "$0")/.." && pwd)}

find "${dir}" \( -path '*/target/surefire-reports/TEST-*.xml' -o -path '*/target/failsafe-reports/TEST-*.xml' \) \
	-not -path '*/it-repo/*' -print0 | sort -z | python3 -c '
import os, sys, xml.etree.ElementTree as ET
root_dir, lines = sys.argv[1], int(sys.argv[2])
failed = 0
for path in sys.stdin.read().split("\0"):
    if not path:
        continue
    module = path[len(root_dir):].lstrip("/").split("/target/")[0] or "."
    try:
        suite = ET.parse(path).getroot()
    except ET.ParseError as ex:
        # A report with characters XML cannot hold (a model checker trace): the plain-text one.
        text = os.path.join(os.path.dirname(path), os.path.basename(path)[len("TEST-"):-len(".xml")] + ".txt")
        print("UNREADABLE %s (%s): from %s" % (path, ex, text))
        failed += 1
        try:
            with open(text, errors="replace") as report:
                report_lines = report.read().splitlines()
        except OSError:
            continue
        for i, line in enumerate(report_lines):
            if "<<< FAILURE!" in line or "<<< ERROR!" in line:
                print("FAILED %s %s" % (module, line.strip()))
                for more in report_lines[i + 1:i + 1 + lines]:
                    print("    " + more[:300])
        continue
    for case in suite.iter("testcase"):
        for kind in ("failure", "error"):
            for outcome in case.findall(kind):
                failed += 1
                message = (outcome.get("message") or "").strip().splitlines()
                first = message[0] if message else ""
                test = case.get("classname") + "#" + case.get("name")
                print("FAILED %s %s (%s, %s s): %s: %s" % (module, test, kind, case.get("time"), outcome.get("type"), first))
                trace = (outcome.text or "").strip().splitlines()
                for line in trace[:lines]:
                    print("    " + line)
print(f"TEST_FAILURES {failed}")
sys.exit(1 if failed else 0)
' "${dir}" "${lines}"
