# The README's test command is `make test`; .ci/run calls exactly that.
GO ?= go
FUZZTIME ?= 3s

.PHONY: all build test vet unit fuzz bench bench-sched devices

all: build

# parity-lite (the user verbs alone, for sbatch-in-a-loop pipelines) is
# static: no dynamic loader to run on each of its many short starts.
build:
	$(GO) build -o parity ./cmd/parity
	CGO_ENABLED=0 $(GO) build -o parity-lite ./cmd/parity-lite

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 25m ./...

# Every parser of user input gets a short fuzzing run on every test pass.
fuzz:
	FUZZTIME=$(FUZZTIME) ./.ci/fuzz.sh

test: vet fuzz unit

# Benchmarks print tables; run them on a quiet machine.
bench-sched:
	$(GO) run ./cmd/parity bench sched

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./scheduler/... ./labs/replay/...

devices: build
	./parity devices --sim dgx-h100
