package main

// goBench is one `go test -bench` figure the README shows.
type goBench struct {
	// What the row measures, in words.
	What string
	Pkg  string
	// Bench is the -bench pattern (anchored by the runner) and Benchtime
	// its -benchtime ("" for the default).
	Bench, Benchtime string
	// Show writes the figure from the parsed metrics (unit → value).
	Show   func(m metrics) string
	Target string
}

func readmeBenches() []goBench {
	return []goBench{
		{What: "KTH-SP2 replay, EASY (28k jobs, 100 processors)", Pkg: "./labs/replay", Bench: "ReplayKTH/easy", Benchtime: "1x",
			Show: func(m metrics) string { return m.seconds("ns/op") + ", " + m.int("jobs/s") + " jobs/s" }, Target: "—"},
		{What: "KTH-SP2 92 times wider on a 9,216-processor flat pool (LLNL-Atlas's), EASY", Pkg: "./labs/replay", Bench: "ReplayWidePool", Benchtime: "1x",
			Show: func(m metrics) string { return m.seconds("ns/op") + ", bounded slowdown " + m.float("bsld") }, Target: "—"},
		{What: "million-job replay (KTH-SP2 tiled), EASY", Pkg: "./labs/replay", Bench: "ReplayMillion", Benchtime: "1x",
			Show: func(m metrics) string { return m.seconds("ns/op") + ", peak heap " + m.int("MiB-peak-heap") + " MiB" }, Target: "≤ 10 s"},
		{What: "Philly, first 20k GPU jobs, EASY on 128 × 8 GPUs", Pkg: "./labs/replay", Bench: "ReplayPhilly", Benchtime: "1x",
			Show: func(m metrics) string { return m.seconds("ns/op") }, Target: "—"},
		{What: "in-memory submit path", Pkg: "./scheduler/controller", Bench: "SubmitInMemory",
			Show: func(m metrics) string { return m.micros("ns/op") + " a job, " + m.int("allocs/op") + " allocations" }, Target: "≤ 20 µs"},
		{What: "durable submits over gRPC, 256 clients", Pkg: "./scheduler/controller", Bench: "SubmitDurable/256clients$", Benchtime: "20000x",
			Show: func(m metrics) string { return m.int("submits/s") + " submits/s" }, Target: "≥ 10,000/s"},
		{What: "100k ledger records, the controller's batched path", Pkg: "./scheduler/store", Bench: "Spooled100k", Benchtime: "1x",
			Show: func(m metrics) string { return m.seconds("ns/op") }, Target: "≤ 5 s"},
		{What: "`parity-sbatch` (sbatch's name) as a process per job, in a row", Pkg: "./cmd/internal/userverbs", Bench: "SubmitProcesses/parity-sbatch", Benchtime: "300x",
			Show: func(m metrics) string {
				return m.millis("ns/op") + " wall, " + m.float("cpu-ms/op") + " ms CPU, " + m.int("submits/s") + " submits/s"
			}, Target: "≥ 10× sbatch"},
		{What: "one 1-GPU `true` batch job, launch to end, 8 at a time, as root (real cgroups and supervisor)", Pkg: "./scheduler/agent/launch", Bench: "LaunchTrueJob/root", Benchtime: "200x",
			Show: func(m metrics) string {
				return m.millis("ns/op") + " wall, " + m.float("host-cpu-ms/job") + " ms of host CPU a job"
			}, Target: "—"},
	}
}
