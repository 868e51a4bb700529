SHELL := /bin/bash
NPM ?= npm

## The suite's files; `npx mocha <file>` runs one file alone.
TEST_SPEC ?= 'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts' 'test/e2e/**/*.test.ts'

.PHONY: install system-deps build start test lint format typecheck bench soak doctor clean deploy-check

node_modules/.installed: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

build: install
	$(NPM) run build

## The Debian packages the service needs (the Noto fonts of certificates): installed as root, else the command.
system-deps:
	bash scripts/install-system-deps.sh

## Installs, builds, migrates, creates a demo workspace and key, runs the API and every worker kind.
start: system-deps build
	node dist/apps/cli/src/main.js start

## The whole suite against the real PostgreSQL and NATS (own database and bus prefix per run).
test: install
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p libs/player/tsconfig.browser.json
	npx mocha $(TEST_SPEC)

lint: install
	npx eslint .
	npx prettier --check .
	npx depcruise apps libs test --config .dependency-cruiser.cjs
	node deploy/check-manifests.mjs
	node docs/architecture-graph.mjs --check

format: install
	npx prettier --write .

typecheck: install
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p libs/player/tsconfig.browser.json

bench: build
	node --import tsx test/bench/run.ts

## 10 minutes (SOAK_SECONDS) of mixed traffic against one `lectern start` process; see test/bench/README.md.
soak: build
	node --import tsx test/bench/run.ts soak

doctor: build
	node dist/apps/cli/src/main.js doctor

clean:
	rm -rf dist

## Checks deploy/: Kubernetes manifests and the compose file (docker compose config when installed).
deploy-check: install
	bash deploy/check.sh
