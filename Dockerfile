# syntax=docker/dockerfile:1
#
# monitor-server container image.
#
#   docker build -t monitor-server:0.1.0 .
#   docker run --rm -p 8181:8181 -v monitor-data:/data monitor-server:0.1.0
#
# Without a registry (no node:20-bookworm-slim to pull): scripts/image.sh build makes the base from Debian's packages
# and the official Node.js build, then builds this file with the classic builder (BuildKit would look the syntax
# frontend above up in a registry); scripts/image.sh test runs the image as the Helm chart does (docs/deploying.md).
#
# Stages: toolchain (node + python3/make/g++ for node-gyp) -> build (all deps, better-sqlite3 compiled from source,
# tsc for the service and for the dashboard's browser modules) -> prod-deps (its node_modules pruned to the production
# deps, only better-sqlite3's addon kept) -> runtime (no toolchain, no npm, non-root).
# Linted by scripts/check-deploy.sh (hadolint, rules in .hadolint.yaml).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS toolchain
# better-sqlite3 is a native addon: node-gyp needs python3, make and a C++ compiler. The versions are bookworm's
# (metapackages that do not move within the release); update them together with NODE_IMAGE's Debian release.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3=3.11.2-1+b1 make=4.3-4.1 g++=4:12.2.0-3 \
    && rm -rf /var/lib/apt/lists/*
# Build native addons from source against the image's own Node headers (/usr/local/include/node): no download of
# prebuilt binaries or of headers, so the build works behind a registry-only proxy and matches the runtime's ABI.
ENV npm_config_build_from_source=true \
    npm_config_nodedir=/usr/local \
    npm_config_audit=false \
    npm_config_fund=false \
    npm_config_update_notifier=false
WORKDIR /app
COPY package.json package-lock.json ./

# ---------------------------------------------------------------------------------------------------------------------
FROM toolchain AS build
RUN npm ci
COPY tsconfig.json tsconfig.dashboard.json ./
COPY src ./src
RUN npm run build

# ---------------------------------------------------------------------------------------------------------------------
FROM build AS prod-deps
# The build stage's node_modules less the dev dependencies: better-sqlite3 is compiled and the packages fetched once.
# better-sqlite3 needs only its compiled addon at run time: its build tree's objects and the SQLite sources (~25 MB)
# go. npm 10.8 can exit 0 from `npm ci` when every fetch failed (npm/cli#7881): prove that each production dependency
# is installed and that the addon loads before the layer is kept.
RUN npm prune --omit=dev \
    && mv node_modules/better-sqlite3/build/Release/better_sqlite3.node /tmp/ \
    && rm -rf node_modules/better-sqlite3/build node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
    && mkdir -p node_modules/better-sqlite3/build/Release \
    && mv /tmp/better_sqlite3.node node_modules/better-sqlite3/build/Release/ \
    && node -e "const fs = require('fs'); for (const d of Object.keys(require('./package.json').dependencies)) fs.accessSync('node_modules/' + d + '/package.json'); new (require('better-sqlite3'))(':memory:').close()"

# ---------------------------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="monitor-server" \
      org.opencontainers.image.description="Stores pytest-monitor measurements and serves them under /api/v1 (SQLite or Elasticsearch)." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"

ENV NODE_ENV=production \
    PORT=8181 \
    HOST=0.0.0.0 \
    MONITOR_SQLITE_PATH=/data/monitor.sqlite

# A fixed, non-root uid/gid (10001) that matches the Helm chart's securityContext; /data belongs to it.
# npm, npx, corepack and yarn are not needed at run time: removing them shrinks the attack surface.
RUN groupadd --system --gid 10001 monitor \
    && useradd --system --uid 10001 --gid monitor --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin monitor \
    && mkdir -p /data \
    && chown monitor:monitor /data \
    && chmod 0750 /data \
    && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
              /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg

WORKDIR /app
# Application files stay owned by root: the service cannot modify its own code.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
# The dashboard's browser modules (tsconfig.dashboard.json); the service finds them at <package root>/dist/dashboard.
COPY --from=build /app/dist/dashboard ./dist/dashboard
# package.json carries "type": "module": node needs it to load dist/ as ES modules.
COPY package.json ./
# monitor-admin on PATH, as `npm install -g` puts it (package.json "bin"); the build made main.js executable.
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/monitor-admin

USER 10001:10001
VOLUME ["/data"]
EXPOSE 8181
STOPSIGNAL SIGTERM

# No curl in the slim image: ask node itself. Probes 127.0.0.1 on $PORT.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8181)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

CMD ["node", "dist/src/server.js"]
