#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

scripts/install-deps.sh --test

echo "== swift build (debug) and unit + in-process server tests"
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build

echo "== server tests under AddressSanitizer"
ASAN_OPTIONS=detect_leaks=0 swift test --scratch-path .build/asan --sanitize=address --filter TrackHubServerTests

echo "== fuzzers (libFuzzer + ASan), 20 s each"
scripts/fuzz.sh 20

echo "== release build for the end-to-end tests"
swift build -c release

echo "== end-to-end tests against the release binary (Python)"
TRACKHUB_BIN="$(swift build -c release --show-bin-path)" python3 -m unittest discover -s tests-py -p 'test_*.py' -v

echo "all tests passed"
