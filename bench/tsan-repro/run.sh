#!/usr/bin/env bash
# Shows that ThreadSanitizer cannot see Synchronization.Mutex on Linux and that HubMutex fixes
# that without hiding real races: builds with --sanitize=thread -DTRACKHUB_TSAN (as
# scripts/tsan.sh) and prints, per case, the TSan reports and the counter's total.
# Expected: mutex, mutex-value: 1 report each, yet the total is right (a false race);
# hubmutex, hubmutex-value, nslock: 0; hubmutex-one-side, unlocked: reported (real races).
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/opt/swift/usr/bin:$PATH"
swift build --sanitize=thread -Xswiftc -DTRACKHUB_TSAN >/dev/null
bin="$(swift build --sanitize=thread -Xswiftc -DTRACKHUB_TSAN --show-bin-path)/repro"
for lock in mutex mutex-value hubmutex hubmutex-value nslock hubmutex-one-side unlocked; do
    out="$("$bin" "$lock" 2>&1 || true)"
    printf '%-18s %s TSan reports, %s\n' "$lock" "$(grep -c '^WARNING: ThreadSanitizer' <<<"$out" || true)" \
        "$(grep '^total' <<<"$out")"
done
