#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, run and test TrackHub.
# Safe to run again: it installs only missing packages.
#   scripts/install-deps.sh          packages to build and run the hub
#   scripts/install-deps.sh --test   also what the test suites need (browser, Python packages)
set -euo pipefail

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

# libyaml-dev: the YAML parser of `serve --config FILE` (the CYAML target).
# libcurl4-openssl-dev: the HTTP client of `serve --webhook URL` (the CCurl target).
# libroutino-dev routino routino-common: `--router routino:DIR` (the CRoutino target), its
# planetsplitter for `trackhub router build`, and its profiles and tagging rules.
packages=(pkg-config libwebsockets-dev libwebsockets-evlib-ev libsqlite3-dev libssl-dev libhiredis-dev libyaml-dev libcurl4-openssl-dev libjs-leaflet libroutino-dev routino routino-common)
if [ "$want_test" = 1 ]; then
  packages+=(chromium chromium-driver python3-pip redis-server redis-tools haproxy)
fi

missing=()
for p in "${packages[@]}"; do
  # No `| grep -q` here: under pipefail an early exit of grep can fail the pipe with SIGPIPE.
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    echo "note: add /opt/swift/usr/bin to PATH"
  else
    echo "error: Swift 6 toolchain not found (install it from swift.org)" >&2
    exit 1
  fi
fi

if [ "$want_test" = 1 ]; then
  python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/../tests-py/requirements.txt"
fi
