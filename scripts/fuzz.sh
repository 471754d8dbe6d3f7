#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/*.swift: decode, trip, http) with
# -sanitize=fuzzer,address and runs each for SECONDS (default 20) over its committed seed
# corpus (fuzz/corpus/<name>). New inputs go to a scratch copy, so the committed corpus only
# changes when someone copies them back. NAMEs pick some of the fuzzers (default: all
# three); each runs in one process (one core).
#   scripts/fuzz.sh [SECONDS [NAME...]]
# Exit status: 0 when no fuzzer found a crash, leak, sanitizer report or broken invariant.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds="${1:-20}"
shift || true
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(decode trip http)
out=".build/fuzz"
mkdir -p "$out/lib"

core=$(find Sources/TrackHubCore -name '*.swift' | sort)
proto=$(find Sources/TrackHubProtocol -name '*.swift' | sort)
crypto="Sources/TrackHubCrypto/HMACSHA256.swift"
auth="Sources/TrackHubServer/Auth/Base64URL.swift Sources/TrackHubServer/Auth/JWT.swift"
flags=(-O -g -sanitize=fuzzer,address -parse-as-library -swift-version 6)
stamp="$out/lib/stamp"
# The newest source, found without a pipe: `ls -t | head -1` under pipefail dies of SIGPIPE
# (exit 141) once the listing outgrows one write, as it did in CI.
newest=scripts/fuzz.sh
for source in $core $proto $crypto $auth fuzz/*.swift; do
  if [ "$source" -nt "$newest" ]; then newest="$source"; fi
done

if [ ! -f "$stamp" ] || [ "$newest" -nt "$stamp" ]; then
  echo "== building fuzzers"
  swiftc "${flags[@]}" -module-name TrackHubCore -emit-module -emit-module-path "$out/lib/TrackHubCore.swiftmodule" \
    -emit-library -static -o "$out/lib/libTrackHubCore.a" $core
  swiftc "${flags[@]}" -module-name TrackHubProtocol -I "$out/lib" -emit-module -emit-module-path "$out/lib/TrackHubProtocol.swiftmodule" \
    -emit-library -static -o "$out/lib/libTrackHubProtocol.a" $proto
  # HMAC is an edge module of its own (TrackHubCrypto, over libcrypto), as in the package.
  swiftc "${flags[@]}" -module-name TrackHubCrypto -I Sources/CCrypto -emit-module -emit-module-path "$out/lib/TrackHubCrypto.swiftmodule" \
    -emit-library -static -o "$out/lib/libTrackHubCrypto.a" $crypto
  swiftc "${flags[@]}" -module-name DecodeFuzzer -I "$out/lib" -I Sources/CCrypto fuzz/DecodeFuzzer.swift $auth \
    "$out/lib/libTrackHubCrypto.a" "$out/lib/libTrackHubProtocol.a" "$out/lib/libTrackHubCore.a" -lcrypto -lm -o "$out/decode-fuzzer"
  swiftc "${flags[@]}" -module-name HTTPFuzzer -I "$out/lib" -I Sources/CCrypto fuzz/HTTPFuzzer.swift $auth \
    "$out/lib/libTrackHubCrypto.a" "$out/lib/libTrackHubProtocol.a" "$out/lib/libTrackHubCore.a" -lcrypto -lm -o "$out/http-fuzzer"
  swiftc "${flags[@]}" -module-name TripFuzzer -I "$out/lib" fuzz/TripFuzzer.swift \
    "$out/lib/libTrackHubCore.a" -lm -o "$out/trip-fuzzer"
  touch "$stamp"
fi

status=0
for name in "${names[@]}"; do
  work="$out/corpus-$name"
  rm -rf "$work" "$out/artifacts-$name"
  mkdir -p "$work" "$out/artifacts-$name"
  cp fuzz/corpus/$name/* "$work/"
  echo "== $name fuzzer, ${seconds}s"
  log="$out/$name.log"
  if SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=1 "$out/$name-fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$out/artifacts-$name/" -print_final_stats=1 "$work" >"$log" 2>&1; then
    :
  else
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  crashes=$(ls "$out/artifacts-$name" | wc -l)
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  echo "$name: executions $execs, coverage $coverage, crashes $crashes (log $log)"
  if [ "$crashes" != 0 ] || [ "$status" != 0 ]; then
    status=1
    tail -40 "$log"
  fi
done
exit $status
