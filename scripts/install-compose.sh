#!/usr/bin/env bash
# Installs the Docker Compose v2 CLI plugin (`docker compose`) from the Go
# module proxy, for checking docker-compose.yml where no Docker engine and no
# compose plugin package exist (as on the project's machines). Idempotent.
set -euo pipefail
version=${COMPOSE_VERSION:-v2.32.4}
plugin=$HOME/.docker/cli-plugins/docker-compose
if docker compose version >/dev/null 2>&1; then
	echo "compose: $(docker compose version)" >&2
	exit 0
fi
gobin=$(mktemp -d)
trap 'rm -rf "$gobin"' EXIT
GOBIN=$gobin GOFLAGS=-mod=mod nice -n 10 go install "github.com/docker/compose/v2/cmd@$version"
mkdir -p "$(dirname "$plugin")"
install -m 0755 "$gobin/cmd" "$plugin"
docker compose version
