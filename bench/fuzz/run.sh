#!/usr/bin/env bash
# The longer fuzz run: the libFuzzer harnesses (decode, trip, http; or the NAMEs given) for
# SECONDS each (default 600), one after the other in one process each, with the result
# appended to bench/fuzz/RESULTS.md (date, commit, machine, executions, coverage, crashes).
#   bench/fuzz/run.sh [SECONDS [NAME...]]
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-600}"
shift || true
status=0
scripts/fuzz.sh "$seconds" "$@" | tee .build/fuzz/summary.txt || status=$?
{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD), ${seconds}s per fuzzer"
  echo
  echo "- command: \`bench/fuzz/run.sh $seconds${*:+ $*}\`"
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), shared), $(free -g | awk '/^Mem:/ {print $2}') GiB"
  grep -E '^(decode|trip|http): executions' .build/fuzz/summary.txt | sed 's/ (log.*//; s/^/- /'
  echo "- exit status: $status"
} >> bench/fuzz/RESULTS.md
exit $status
