# monitor-server — every entry point a developer or CI needs. Each target installs what it uses.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NODE_MODULES_STAMP := node_modules/.install-stamp
# better-sqlite3 is a native addon. When no prebuilt binary can be fetched (GitHub unreachable), node-gyp compiles it
# and needs Node's headers, which it would download from nodejs.org: point it at the system's own headers instead.
# node-gyp >= 11.4 (bundled from npm 11.6.2) reads npm_package_config_node_gyp_nodedir, which npm leaves alone; older
# ones read only npm_config_nodedir, which npm 11 warns about on every call, so that is set for older npm only.
NODE_HEADERS_PREFIX := $(if $(wildcard /usr/include/node/node.h),/usr,)
ifneq ($(NODE_HEADERS_PREFIX),)
export npm_package_config_node_gyp_nodedir ?= $(NODE_HEADERS_PREFIX)
NPM_VERSION := $(shell npm --version 2>/dev/null)
ifneq ($(firstword $(shell printf '%s\n' 11.6.2 $(NPM_VERSION) | sort -V)),11.6.2)
export npm_config_nodedir ?= $(NODE_HEADERS_PREFIX)
endif
endif

.PHONY: help install build run test bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --no-update-notifier
	@touch $@

install: $(NODE_MODULES_STAMP) ## install the npm dependencies (npm ci)

build: install ## compile TypeScript into dist/
	npm run build

run: build ## run the service on the embedded SQLite store (PORT=8181, see README for settings)
	npm start

test: build ## run every test suite on both stores (installs and starts what the tests need)
	bash scripts/test.sh

bench: build ## ingest and query benchmarks beside the original server (not part of test; see bench/README.md)
	bash bench/suite/run.sh

clean: ## remove build output, caches and local data
	rm -rf dist .cache data
