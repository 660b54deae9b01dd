#!/usr/bin/env bash
# A Go client generated from internal/server/openapi.json by oapi-codegen (from
# the Go module proxy) must generate and compile: the spec is usable by the
# tools users generate clients with, not only by dmar's own.
#   scripts/clients/codegen.sh [DIR]   (DIR: where to generate; a temporary folder by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
spec=$PWD/internal/server/openapi.json
version=v2.8.2
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
cd "$dir"
printf 'module example.com/dmarclient\n\ngo 1.24\n' >go.mod
go run "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$version" -generate types,client -package dmarclient -o client.go "$spec"
go mod tidy >/dev/null 2>&1 || go mod tidy
go vet ./...
go build ./...
echo "codegen: oapi-codegen $version generated $(grep -c '^func ' client.go) functions from openapi.json; they compile"
