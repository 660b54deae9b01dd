# The README's two commands:
#   make demo   set up, then serve DMAR on the embedded default over ../shared/data/codexm-film and answer a query
#   make test   set up, start the real backends the tests need, run the whole test suite
# and: make bench  the Go benchmarks and the GNN table (scripts/bench.sh; DMAR_BENCHTIME=1x for a quick pass)
#      make lint   golangci-lint with .golangci.yml (make test runs it too)
GO ?= go
ADDR ?= 127.0.0.1:8080

.PHONY: demo test setup build bench vet lint clean

setup:
	scripts/setup.sh

build:
	$(GO) build -o bin/dmar ./cmd/dmar

demo: setup build
	scripts/demo.sh $(ADDR)

test: setup
	scripts/test.sh

bench: setup build
	scripts/bench.sh

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)

# golangci-lint, pinned, with .golangci.yml (installed into ~/.cache/dmar/bin once)
lint:
	scripts/lint.sh

clean:
	rm -rf bin
