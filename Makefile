# monitor-server — every entry point a developer or CI needs. Each target installs what it uses.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NODE_MODULES_STAMP := node_modules/.install-stamp
# node-gyp builds better-sqlite3 from source when no prebuilt binary can be fetched; point it at the local headers.
export npm_config_nodedir ?= $(if $(wildcard /usr/include/node/node.h),/usr,)

.PHONY: help install build run test bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES_STAMP) ## install the npm dependencies (npm ci)

build: install ## compile TypeScript into dist/
	npm run build

run: build ## run the service on the embedded SQLite store (PORT=8181, see README for settings)
	npm start

test: build ## run every test suite on both stores (installs and starts what the tests need)
	bash scripts/test.sh

bench: build ## ingest and query benchmarks beside the original server (not part of test; see bench/README.md)
	bash bench/run.sh

clean: ## remove build output, caches and local data
	rm -rf dist .cache data
