#!/usr/bin/env bash
# Makes sure a Chromium is installed for the browser tests (test/browser/, driven by playwright-core, which downloads
# no browser of its own) and prints its executable path on stdout; everything else goes to stderr.
#
#   scripts/chromium.sh                      # → /usr/bin/chromium
#   CHROMIUM_PATH=/opt/chrome/chrome scripts/chromium.sh   # use that browser instead (checked, never installed)
#
# When no Chromium is found, installs Debian's `chromium` package (and fonts-liberation, so that pages render with
# real glyphs) with apt-get: as root directly, otherwise through passwordless sudo. Idempotent: quick when present.
set -euo pipefail

log() { printf 'chromium: %s\n' "$*" >&2; }

if [[ -n "${CHROMIUM_PATH:-}" ]]; then
  [[ -x "$CHROMIUM_PATH" ]] || { log "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file"; exit 1; }
  printf '%s\n' "$CHROMIUM_PATH"
  exit 0
fi

# Debian's /usr/bin/chromium is a shell wrapper that adds flags of its own (extensions, GPU rasterisation) and
# whose /dev/shm check misfires in containers; playwright passes every flag it needs, so use the binary itself.
find_chromium() {
  if [[ -x /usr/lib/chromium/chromium ]]; then echo /usr/lib/chromium/chromium; return; fi
  command -v chromium || command -v chromium-browser || true
}

path="$(find_chromium)"
if [[ -z "$path" ]]; then
  if [[ "$(id -u)" == 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    log "Chromium is missing and installing it needs root: run 'apt-get install chromium fonts-liberation' as root, or set CHROMIUM_PATH"
    exit 1
  fi
  command -v apt-get >/dev/null 2>&1 || { log "Chromium is missing and there is no apt-get here: install Chromium and set CHROMIUM_PATH"; exit 1; }
  apt_log="$(mktemp)"
  trap 'rm -f "$apt_log"' EXIT
  apt() {
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq "$@" >"$apt_log" 2>&1 \
      || { tail -n 30 "$apt_log" >&2; log "apt-get $* failed"; exit 1; }
  }
  log "installing Debian's chromium package (about 80 MB to download)"
  apt update
  apt install -y --no-install-recommends chromium fonts-liberation
  path="$(find_chromium)"
  [[ -n "$path" ]] || { log "apt-get installed chromium but no chromium executable is on the PATH"; exit 1; }
fi

# A browser that cannot even start (missing libraries) fails here, with its own message, rather than in every test.
"$path" --version >&2 || { log "$path --version failed"; exit 1; }
printf '%s\n' "$path"
