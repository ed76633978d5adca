# The README's test command is `make test`; .ci/run calls exactly that.
GO ?= go
FUZZTIME ?= 3s

.PHONY: all build test vet unit unit-norace fuzz fuzz-ci bench bench-sched bench-baseline bench-readme devices chaos compat compat-record compat-floors compat-env-record compat-env compat-env-floors

all: build

# parity-agent is the node agent alone: every node maps half the code of
# parity (it loads NVML, so it keeps cgo). parity-lite (the user verbs
# alone), parity-sbatch (sbatch alone, no gRPC, for sbatch-in-a-loop
# pipelines) and parity-shim (the agent's per-job supervisor, found beside
# parity) are static: no dynamic loader to run on each of their many short
# starts.
build:
	$(GO) build -o parity ./cmd/parity
	$(GO) build -o parity-agent ./cmd/parity-agent
	CGO_ENABLED=0 $(GO) build -o parity-lite ./cmd/parity-lite
	CGO_ENABLED=0 $(GO) build -o parity-sbatch ./cmd/parity-sbatch
	CGO_ENABLED=0 $(GO) build -o parity-shim ./cmd/parity-shim

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 25m ./...

# What a job inherits, checked again in a plain build (what nodes run):
# the race detector's runtime changes the supervisor's timing and holds
# descriptors of its own. Repeated, as a leak can hide in a short window.
unit-norace:
	$(GO) test -count=3 -run 'StartWithOnlyTheirStandardDescriptors' ./scheduler/agent/shim/ ./scheduler/agent/launch/

# Every parser of user input: a short fuzzing run each (nightly, or before
# touching a parser). Raise FUZZTIME for a deeper search.
fuzz:
	FUZZTIME=$(FUZZTIME) ./.ci/fuzz.sh

# The test command fuzzes the GRES and CPU-list parsers briefly; the other
# targets replay their seed corpora and saved findings in `unit`, so a
# random discovery cannot make an unrelated change fail.
fuzz-ci:
	FUZZTIME=$(FUZZTIME) FUZZ_ONLY="FuzzParseGRES FuzzParseCPUList" ./.ci/fuzz.sh

test: vet fuzz-ci unit unit-norace

# Benchmarks print tables; run them on a quiet machine.
bench-sched:
	$(GO) run ./cmd/parity bench sched

# The performance guards (instruction counts under valgrind, in `unit`)
# compare against committed baselines; this rewrites them on purpose: say
# why in the commit.
bench-baseline:
	PARITY_PERFGUARD_UPDATE=1 $(GO) test -count=1 -v -run '^TestPerfGuards$$' ./scheduler/internal/perfguard

# The README's performance tables, measured and written in place (a few
# minutes; run it on a quiet machine).
bench-readme:
	$(GO) run ./cmd/internal/benchreadme --write README.md

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./scheduler/... ./labs/replay/...

# The fault and attack harness (issue #23), on process labs over loopback:
# the controller killed with SIGKILL 20 times during a submission stream,
# an agent down past the node timeout, the authorisation matrix over the
# CLI, gRPC and HTTP, bad input, unauthenticated and slow load, ledger and
# state-directory outages. Prints a table; exits 1 when a hard invariant
# breaks. About 5 minutes on 2 cores; needs root, as labs do. Narrow it
# with e.g. CHAOSFLAGS="--only kill --trials 5".
chaos: build
	./parity chaos $(CHAOSFLAGS)

devices: build
	./parity devices --sim dgx-h100

# The differential harness against Slurm 22.05 (issue #20): 2,400
# generated sbatch cases submitted held to the slurm-anchor (started with
# its up.sh when none answers) and to a Parity of its shape in-process;
# prints the agreement per field, accept/reject first. Without a Slurm it
# compares the committed corpus (what `unit` checks). compat-record
# re-records the corpus; compat-floors rewrites the agreement go test
# holds Parity to (say why in the commit).
ANCHOR ?= ../shared/tools/slurm-anchor
COMPAT = $(GO) run ./cmd/internal/compat/compatcmd -anchor $(ANCHOR)
compat:
	$(COMPAT) $(COMPATFLAGS)

compat-record:
	$(COMPAT) -record $(COMPATFLAGS)

compat-floors:
	$(COMPAT) -recorded -mismatches 0 -write-floors cmd/internal/compat/testdata/floors.txt

# The SLURM_* variables a job and an srun step inside it see: compat-env-
# record runs the env cases on the anchor (sbatch --wait) into
# testdata/envcorpus.jsonl; compat-env runs them on a lab of the anchor's
# nodes (root: lab agents run jobs) and prints the agreement per variable;
# compat-env-floors rewrites the floors TestEnvCorpus holds Parity to.
compat-env-record:
	$(COMPAT) -env-record $(COMPATFLAGS)

compat-env:
	$(GO) test ./cmd/internal/compat -run TestEnvCorpus -count=1 -v

compat-env-floors:
	$(GO) test ./cmd/internal/compat -run TestEnvCorpus -count=1 -args -write-env-floors
