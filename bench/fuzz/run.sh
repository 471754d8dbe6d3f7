#!/usr/bin/env bash
# The longer fuzz run: both libFuzzer harnesses for SECONDS each (default 600), with the
# result appended to bench/fuzz/RESULTS.md (date, commit, executions, crashes).
#   bench/fuzz/run.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-600}"
status=0
scripts/fuzz.sh "$seconds" | tee .build/fuzz/summary.txt || status=$?
{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD), ${seconds}s per fuzzer"
  echo
  grep -E '^(decode|trip): executions' .build/fuzz/summary.txt | sed 's/ (log.*//; s/^/- /'
  echo "- exit status: $status"
} >> bench/fuzz/RESULTS.md
exit $status
