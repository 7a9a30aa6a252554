#!/usr/bin/env bash
# The alert rules' tests: `promtool check rules` and `promtool test rules` on
# monitoring/prometheus/zk-lock-alerts.yml with its tests (zk-lock-alerts-test.yml), then the same
# tests on copies of the rules each made wrong on purpose, which must fail them: a test that cannot
# fail proves nothing. promtool comes from Debian's prometheus package, installed when missing
# (scripts/prometheus-server.sh install).
#
# Usage: scripts/alert-rules-test.sh [--show-wrong]
#   --show-wrong  print promtool's output for each wrong copy (what a broken rule looks like)
# Prints one ALERT_RULES line (rules, test groups, result) and one WRONG_RULE line per wrong copy.
# Exit status: 0 when the rules pass and every wrong copy fails, 1 otherwise, 3 when promtool cannot
# be installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

show_wrong=false
case "${1:-}" in
	--show-wrong) show_wrong=true ;;
	"") ;;
	*) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

scripts/prometheus-server.sh install >/dev/null

rules=monitoring/prometheus/zk-lock-alerts.yml
tests=monitoring/prometheus/zk-lock-alerts-test.yml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

promtool check rules "$rules" >"$work/check.log" 2>&1 || { cat "$work/check.log"; echo "ALERT_RULES result=invalid"; exit 1; }
count=$(grep -c '^ *- alert:' "$rules")
groups=$(grep -c '^ *- interval:' "$tests")
if ! promtool test rules "$tests" >"$work/test.log" 2>&1; then
	cat "$work/test.log"
	echo "ALERT_RULES rules=$count test_groups=$groups result=FAILED"
	exit 1
fi
echo "ALERT_RULES rules=$count test_groups=$groups result=passed"

# Each wrong copy: a description, and the sed expression that makes the rules file wrong.
wrong=(
	"ZkLockLost pages only from two lost grants|s/increase(zk_lock_lost_total\[5m\])) > 0/increase(zk_lock_lost_total[5m])) > 1/"
	"ZkLockWaitsTimingOut counts every outcome as a timeout|s/rate(zk_lock_acquire_seconds_count{outcome=\"timeout\"}\[5m\])/rate(zk_lock_acquire_seconds_count[5m])/"
	"ZkLockZooKeeperErrors counts grants as errors|s/zk_lock_acquire_seconds_count{outcome=\"error\"}/zk_lock_acquire_seconds_count{outcome=~\"error|acquired\"}/"
	"ZkLockHeldNearCeiling warns at 40 %|s/(zk_lock_ceiling_used) > 0.8/(zk_lock_ceiling_used) > 0.4/"
	"ZkLockDisconnected fires at once, without its minute|/alert: ZkLockDisconnected/,/severity/{/for: 1m/d}"
	"ZkLockHeldLocksGrowing forgets that the grants must keep growing|/alert: ZkLockHeldLocksGrowing/,/for:/{/deriv(zk_lock_active/d;/^ *and\$/d}"
	"ZkLockKeptKeysAtBound counts every cause|s/zk_lock_kept_given_up_total{cause=\"max-keys\"}/zk_lock_kept_given_up_total/"
)
status=0
for entry in "${wrong[@]}"; do
	what=${entry%%|*}
	edit=${entry#*|}
	mkdir -p "$work/wrong"
	sed -e "$edit" "$rules" >"$work/wrong/zk-lock-alerts.yml"
	cp "$tests" "$work/wrong/zk-lock-alerts-test.yml"
	if cmp -s "$rules" "$work/wrong/zk-lock-alerts.yml"; then
		echo "WRONG_RULE \"$what\": the edit changed nothing (fix this script)"
		status=1
	elif (cd "$work/wrong" && promtool check rules zk-lock-alerts.yml >/dev/null 2>&1 \
			&& promtool test rules zk-lock-alerts-test.yml >"$work/wrong.log" 2>&1); then
		echo "WRONG_RULE \"$what\": the tests still passed"
		status=1
	else
		failed=$(grep -c 'alertname:' "$work/wrong.log" || true)
		echo "WRONG_RULE \"$what\": the tests failed ($failed alert checks), as they must"
		if $show_wrong; then
			sed 's/^/    /' "$work/wrong.log"
		fi
	fi
done
exit $status
