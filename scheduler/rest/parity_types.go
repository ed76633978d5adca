package rest

// Parity's own answers under /parity/v1/. Their schemas in the served
// document are derived from these types (schemaOf): a field without
// omitempty is required, and the doc tag is its description. Times are
// Slurm's uint64 no_val objects, as in every v0.0.44 answer.

type explainResp struct {
	Explanation *explanation `json:"explanation,omitempty" doc:"why the job is where it is"`
	envelope
}

type explanation struct {
	JobID         uint64          `json:"job_id"`
	JobState      []string        `json:"job_state" doc:"as v0.0.44_job_info's job_state"`
	Reason        string          `json:"reason" doc:"the pending reason, Slurm's word (Priority, Resources, ...); empty for a job not pending"`
	Detail        string          `json:"detail" doc:"what the reason is about: the limit, node or job in the way"`
	Text          string          `json:"text" doc:"the explanation as parity explain prints it"`
	ExpectedStart *noVal          `json:"expected_start" doc:"when the scheduler expects it to start (set false: no estimate, or not pending)"`
	Facts         []string        `json:"facts" doc:"what the scheduler saw: the partitions, limits and resources it checked"`
	Suggestions   []string        `json:"suggestions" doc:"what would let it start"`
	Priority      *priorityInfo   `json:"priority,omitempty" doc:"the priority breakdown of the last pass (sprio), pending jobs only"`
	History       []decisionEvent `json:"history,omitempty" doc:"the job's decision-log entries, with history=true"`
}

type priorityInfo struct {
	Total             float64            `json:"total"`
	Age               float64            `json:"age"`
	Fairshare         float64            `json:"fairshare"`
	JobSize           float64            `json:"job_size"`
	Partition         float64            `json:"partition"`
	QOS               float64            `json:"qos"`
	TRES              map[string]float64 `json:"tres"`
	WeightedAge       float64            `json:"weighted_age"`
	WeightedFairshare float64            `json:"weighted_fairshare"`
	WeightedJobSize   float64            `json:"weighted_job_size"`
	WeightedPartition float64            `json:"weighted_partition"`
	WeightedQOS       float64            `json:"weighted_qos"`
	WeightedTRES      float64            `json:"weighted_tres"`
	Nice              int32              `json:"nice"`
	Override          string             `json:"override,omitempty" doc:"why the total is not the sum of the weighted terms"`
}

type eventsResp struct {
	Events []decisionEvent `json:"events" doc:"oldest first; newest first when limit is given"`
	envelope
}

// decisionEvent is one entry of the decision log.
type decisionEvent struct {
	Seq          uint64            `json:"seq"`
	Time         *noVal            `json:"time"`
	Kind         string            `json:"kind" doc:"submit, start, end, cancel, requeue, preempt, hold, release, update, drain, resume, down, reclaim, node_fail, register, health, alert, ..."`
	JobID        uint64            `json:"job_id,omitempty"`
	Node         string            `json:"node,omitempty"`
	Nodes        []string          `json:"nodes,omitempty" doc:"the placement chosen"`
	Alternatives []string          `json:"alternatives,omitempty" doc:"other candidates considered"`
	Devices      []string          `json:"devices,omitempty" doc:"the GPUs (UUIDs) the decision is about"`
	Actor        string            `json:"actor" doc:"a user, scheduler, or agent:NODE"`
	Reason       string            `json:"reason,omitempty"`
	Detail       string            `json:"detail,omitempty"`
	Verdict      string            `json:"verdict,omitempty" doc:"the limit or health verdict involved"`
	Priority     *priorityInfo     `json:"priority,omitempty"`
	Fields       map[string]string `json:"fields,omitempty" doc:"the decision's other inputs"`
}

type gpusResp struct {
	GPUs []gpuInfo `json:"gpus" doc:"by node, then index"`
	envelope
}

// gpuInfo is one GPU as the controller tracks it.
type gpuInfo struct {
	Node         string     `json:"node"`
	UUID         string     `json:"uuid"`
	Index        int32      `json:"index"`
	Type         string     `json:"type" doc:"its GRES type (h100, mi300x, ...)"`
	Parent       string     `json:"parent,omitempty" doc:"the GPU this slice is part of"`
	State        string     `json:"state" doc:"idle, alloc or drain"`
	Health       string     `json:"health" doc:"the health policy's verdict: unknown, healthy, suspect or failed; empty when health checks are off"`
	HealthReason string     `json:"health_reason,omitempty" doc:"what failed it"`
	HealthHeld   bool       `json:"health_held" doc:"it flapped: only an admin resume returns it"`
	HealthExempt bool       `json:"health_exempt" doc:"health decisions about it are logged, not applied"`
	DrainReason  string     `json:"drain_reason,omitempty"`
	DrainedBy    string     `json:"drained_by,omitempty" doc:"a user, or health for the policy"`
	JobID        uint64     `json:"job_id,omitempty" doc:"the job holding it"`
	LastSample   *gpuSample `json:"last_sample,omitempty" doc:"its latest telemetry sample"`
}

type gpuSample struct {
	Time              *noVal   `json:"time"`
	UtilizationPct    float64  `json:"utilization_pct"`
	MemoryUsedBytes   uint64   `json:"memory_used_bytes"`
	MemoryTotalBytes  uint64   `json:"memory_total_bytes"`
	TemperatureC      float64  `json:"temperature_c"`
	PowerW            float64  `json:"power_w"`
	CorrectedErrors   uint64   `json:"corrected_errors"`
	UncorrectedErrors uint64   `json:"uncorrected_errors"`
	Missing           []string `json:"missing,omitempty" doc:"fields the driver could not read: their numbers are no value, not zero"`
}

type conformanceResp struct {
	Report *conformanceReport `json:"report,omitempty"`
	envelope
}

// conformanceReport is the newest report.json's summary and matrix.
type conformanceReport struct {
	File          string              `json:"file" doc:"the report read, under the reports directory"`
	ID            string              `json:"id"`
	Target        string              `json:"target"`
	Lab           string              `json:"lab,omitempty"`
	Started       *noVal              `json:"started"`
	Finished      *noVal              `json:"finished"`
	ParityVersion string              `json:"parity_version"`
	SuiteVersion  string              `json:"suite_version,omitempty"`
	Vendors       []conformanceVendor `json:"vendors"`
	Summary       conformanceSummary  `json:"summary"`
	Matrix        []conformanceRow    `json:"matrix" doc:"one row per spec, by area"`
}

type conformanceVendor struct {
	Name          string `json:"name"`
	Driver        string `json:"driver,omitempty"`
	DriverVersion string `json:"driver_version,omitempty"`
	Devices       int    `json:"devices"`
	Model         string `json:"model,omitempty"`
}

type conformanceSummary struct {
	Vendor conformanceTotals `json:"vendor" doc:"per-vendor results"`
	Parity conformanceTotals `json:"parity" doc:"cross-vendor comparisons"`
	Green  bool              `json:"green" doc:"results and none failed or errored"`
}

type conformanceTotals struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Errors  int `json:"errors"`
}

type conformanceRow struct {
	ID      string            `json:"id"`
	Area    string            `json:"area"`
	Name    string            `json:"name"`
	Results map[string]string `json:"results" doc:"vendor: passed, failed, skipped or error"`
	Parity  string            `json:"parity,omitempty" doc:"the cross-vendor comparison's status"`
	Reasons map[string]string `json:"reasons,omitempty" doc:"vendor (or parity): why it did not pass"`
}
