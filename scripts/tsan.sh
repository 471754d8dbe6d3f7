#!/usr/bin/env bash
# ThreadSanitizer over every Swift test target (issue 39). Not part of scripts/test.sh: the
# build (2-4 min) and the tests (3.5-6 min under TSan) on the 2-core machine would take the
# ~20-minute test command to the edge of its 30 minutes; run this before every stop instead.
#
# Builds into its own scratch path (.build/tsan) so the normal and ASan builds stay warm, with
# -DTRACKHUB_TSAN so `HubMutex` tells TSan about the futex lock it cannot see
# (Sources/TrackHubSync/HubMutex.swift, docs/architecture.md "Threads"); runs the tests with
# scripts/tsan.supp; prints the number of reports; exits non-zero if any report (or test
# failure) remains. The full output is kept in .build/tsan/tsan-test.log. Extra arguments go
# to `swift test` (e.g. `scripts/tsan.sh --filter TrackHubStoreTests`).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

flags=(--scratch-path .build/tsan --sanitize=thread -Xswiftc -DTRACKHUB_TSAN)
log=.build/tsan/tsan-test.log

echo "== swift build --sanitize=thread (.build/tsan)"
swift build --build-tests "${flags[@]}" || exit 1

echo "== swift test --sanitize=thread, every Swift test target (log: $log)"
# halt_on_error=0: count every report rather than stop at the first;
# print_suppressions=1: the log shows which suppression matched how often.
TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=0 print_suppressions=1 ${TSAN_OPTIONS:-}" \
    swift test --skip-build "${flags[@]}" "$@" >"$log" 2>&1
tests=$?

reports=$(grep -c '^WARNING: ThreadSanitizer' "$log")
suppressed=$(awk '/^Suppressions used:/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {n += $1} /^$/ {on = 0} END {print n + 0}' "$log")
grep -E '^(✔|✘) Test run with|^Executed [0-9]+ tests' "$log" || true
grep -E '^SUMMARY: ThreadSanitizer' "$log" | sort | uniq -c | sort -rn || true
echo "tsan: $reports unsuppressed reports, $suppressed suppressed; tests exit status $tests"

if [ "$reports" -ne 0 ] || [ "$tests" -ne 0 ]; then
    echo "tsan: FAILED (see $log)"
    exit 1
fi
echo "tsan: clean"
