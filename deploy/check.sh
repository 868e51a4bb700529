#!/usr/bin/env bash
# Checks deploy/ without a Docker engine or a cluster:
#   1. every Kubernetes manifest and the compose file parse and pass deploy/check-manifests.mjs
#      (required fields, probe paths served by the API, known variables, security rules, and
#      schema validation when the kubernetes-models package is installed);
#   2. `docker compose config -q` (or docker-compose v1) when one is installed;
#   3. `docker build --check` (Dockerfile lint, BuildKit) when a Docker engine answers.
# Usage: deploy/check.sh   (from anywhere; exits non-zero on the first failing step)
set -euo pipefail
cd "$(dirname "$0")/.."

node deploy/check-manifests.mjs

# A throwaway key so the required-variable check in the compose file does not stop validation.
export WEBHOOK_SECRET_KEY="${WEBHOOK_SECRET_KEY:-$(printf '0%.0s' {1..64})}"
if docker compose version >/dev/null 2>&1; then
  docker compose -f deploy/docker-compose.yml config -q
  echo "compose: docker compose config: ok"
elif command -v docker-compose >/dev/null 2>&1; then
  # Compose v1 predates the top-level `name:` key; validate everything else.
  tmp="$(mktemp --suffix=.yml)"
  trap 'rm -f "$tmp"' EXIT
  sed '/^name: /d' deploy/docker-compose.yml >"$tmp"
  docker-compose --project-directory deploy -f "$tmp" config -q
  echo "compose: docker-compose $(docker-compose version --short) config: ok (top-level name: not checked by v1)"
else
  echo "compose: skipped (no docker compose plugin or docker-compose)"
fi

if docker info >/dev/null 2>&1; then
  docker build --check -f deploy/Dockerfile .
  echo "dockerfile: docker build --check: ok"
else
  echo "dockerfile: lint skipped (no Docker engine)"
fi
