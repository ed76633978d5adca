package rest

// The v0.0.44 objects Parity fills, named after their schemas in the
// OpenAPI document (v0.0.44_<name>). Only the properties Parity can give
// a Slurm meaning are declared; omitempty keeps the rest out of the answer
// rather than sending zeros a client would take for facts.

// envelope is v0.0.44_openapi_resp: what every answer carries.
type envelope struct {
	Meta     *meta     `json:"meta,omitempty"`
	Errors   []apiErr  `json:"errors"`
	Warnings []warning `json:"warnings"`
}

type meta struct {
	Plugin  metaPlugin  `json:"plugin"`
	Client  metaClient  `json:"client"`
	Command []string    `json:"command"`
	Slurm   metaRelease `json:"slurm"`
}

type metaPlugin struct {
	Type              string `json:"type"`
	Name              string `json:"name"`
	DataParser        string `json:"data_parser"`
	AccountingStorage string `json:"accounting_storage"`
}

type metaClient struct {
	Source string `json:"source"`
	User   string `json:"user"`
	Group  string `json:"group"`
}

type metaRelease struct {
	Version struct {
		Major string `json:"major"`
		Micro string `json:"micro"`
		Minor string `json:"minor"`
	} `json:"version"`
	Release string `json:"release"`
	Cluster string `json:"cluster"`
}

// apiErr is v0.0.44_openapi_error.
type apiErr struct {
	Description string `json:"description"`
	ErrorNumber int32  `json:"error_number"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

// warning is v0.0.44_openapi_warning.
type warning struct {
	Description string `json:"description"`
	Source      string `json:"source"`
}

// noVal is the uintNN_no_val_struct family: a number that may be unset
// or infinite.
type noVal struct {
	Set      bool  `json:"set"`
	Infinite bool  `json:"infinite"`
	Number   int64 `json:"number"`
}

// noValF is v0.0.44_float64_no_val_struct.
type noValF struct {
	Set      bool    `json:"set"`
	Infinite bool    `json:"infinite"`
	Number   float64 `json:"number"`
}

func num(n int64) *noVal { return &noVal{Set: true, Number: n} }
func unset() *noVal      { return &noVal{} }
func infinite() *noVal   { return &noVal{Set: false, Infinite: true} }
func numOrInf(n int64) *noVal {
	if n == 0 {
		return infinite()
	}
	return num(n)
}

type pingResp struct {
	Pings []controllerPing `json:"pings"`
	envelope
}

type controllerPing struct {
	Hostname   string `json:"hostname"`
	Pinged     string `json:"pinged"`
	Responding bool   `json:"responding"`
	Latency    int64  `json:"latency"`
	Mode       string `json:"mode"`
	Primary    bool   `json:"primary"`
}

type diagResp struct {
	Statistics diagStats `json:"statistics"`
	envelope
}

// diagStats is the part of v0.0.44_stats_msg Parity measures.
type diagStats struct {
	ReqTime           *noVal `json:"req_time"`
	ReqTimeStart      *noVal `json:"req_time_start"`
	ScheduleCycleLast int32  `json:"schedule_cycle_last"`
	ScheduleQueueLen  int32  `json:"schedule_queue_length"`
	JobsPending       int32  `json:"jobs_pending"`
	JobsRunning       int32  `json:"jobs_running"`
	JobsCompleted     int32  `json:"jobs_completed"`
	JobsCanceled      int32  `json:"jobs_canceled"`
	JobsFailed        int32  `json:"jobs_failed"`
	JobStatesTS       *noVal `json:"job_states_ts"`
	BfWhenLastCycle   *noVal `json:"bf_when_last_cycle"`
	BfActive          bool   `json:"bf_active"`
}

type jobInfoResp struct {
	Jobs         []*jobInfo `json:"jobs"`
	LastBackfill *noVal     `json:"last_backfill"`
	LastUpdate   *noVal     `json:"last_update"`
	envelope
}

type exitCode struct {
	Status     []string   `json:"status"`
	ReturnCode *noVal     `json:"return_code"`
	Signal     exitSignal `json:"signal"`
}

type exitSignal struct {
	ID   *noVal `json:"id"`
	Name string `json:"name"`
}

// jobInfo is v0.0.44_job_info.
type jobInfo struct {
	Account         string    `json:"account"`
	AdminComment    string    `json:"admin_comment,omitempty"`
	ArrayJobID      *noVal    `json:"array_job_id,omitempty"`
	ArrayTaskID     *noVal    `json:"array_task_id,omitempty"`
	ArrayTaskString string    `json:"array_task_string,omitempty"`
	BatchFlag       bool      `json:"batch_flag"`
	BatchHost       string    `json:"batch_host,omitempty"`
	Cluster         string    `json:"cluster"`
	Command         string    `json:"command,omitempty"`
	Comment         string    `json:"comment,omitempty"`
	Contiguous      bool      `json:"contiguous"`
	CPUsPerTask     *noVal    `json:"cpus_per_task,omitempty"`
	Deadline        *noVal    `json:"deadline,omitempty"`
	Dependency      string    `json:"dependency,omitempty"`
	EligibleTime    *noVal    `json:"eligible_time,omitempty"`
	EndTime         *noVal    `json:"end_time,omitempty"`
	ExcludedNodes   string    `json:"excluded_nodes,omitempty"`
	ExitCode        *exitCode `json:"exit_code,omitempty"`
	Features        string    `json:"features,omitempty"`
	JobID           int64     `json:"job_id"`
	JobState        []string  `json:"job_state"`
	MailUser        string    `json:"mail_user,omitempty"`
	MaxNodes        *noVal    `json:"max_nodes,omitempty"`
	MemoryPerCPU    *noVal    `json:"memory_per_cpu,omitempty"`
	MemoryPerNode   *noVal    `json:"memory_per_node,omitempty"`
	Name            string    `json:"name"`
	Nodes           string    `json:"nodes"`
	Nice            int32     `json:"nice"`
	CPUs            *noVal    `json:"cpus,omitempty"`
	NodeCount       *noVal    `json:"node_count,omitempty"`
	Tasks           *noVal    `json:"tasks,omitempty"`
	Partition       string    `json:"partition"`
	Hold            bool      `json:"hold"`
	Priority        *noVal    `json:"priority,omitempty"`
	QOS             string    `json:"qos"`
	RequiredNodes   string    `json:"required_nodes,omitempty"`
	Requeue         bool      `json:"requeue"`
	RestartCnt      int32     `json:"restart_cnt"`
	ResvName        string    `json:"resv_name,omitempty"`
	StartTime       *noVal    `json:"start_time,omitempty"`
	StateDesc       string    `json:"state_description,omitempty"`
	StateReason     string    `json:"state_reason"`
	StandardInput   string    `json:"standard_input,omitempty"`
	StandardOutput  string    `json:"standard_output,omitempty"`
	StandardError   string    `json:"standard_error,omitempty"`
	SubmitTime      *noVal    `json:"submit_time,omitempty"`
	SuspendTime     *noVal    `json:"suspend_time,omitempty"`
	TimeLimit       *noVal    `json:"time_limit,omitempty"`
	TimeMinimum     *noVal    `json:"time_minimum,omitempty"`
	TresPerNode     string    `json:"tres_per_node,omitempty"`
	TresPerJob      string    `json:"tres_per_job,omitempty"`
	TresPerTask     string    `json:"tres_per_task,omitempty"`
	TresAllocStr    string    `json:"tres_alloc_str,omitempty"`
	UserName        string    `json:"user_name"`
	CurrentWorkDir  string    `json:"current_working_directory,omitempty"`
}

type submitResp struct {
	JobID   int64  `json:"job_id"`
	StepID  string `json:"step_id"`
	UserMsg string `json:"job_submit_user_msg"`
	envelope
}

// killResp is v0.0.44_openapi_kill_job_resp. Its status entries' schema
// lists "error/string" and its siblings as required property names, which
// no object that also has the nested "error" object Slurm prints can
// satisfy; Parity answers success with an empty list and failure with
// the envelope's errors, which clients read first.
type killResp struct {
	Status []struct{} `json:"status"`
	envelope
}

type jobPostResp struct {
	Results []jobPostResult `json:"results"`
	envelope
}

type jobPostResult struct {
	JobID     int64  `json:"job_id"`
	StepID    string `json:"step_id"`
	Error     string `json:"error"`
	ErrorCode int32  `json:"error_code"`
	Why       string `json:"why"`
}

type nodesResp struct {
	Nodes      []*nodeInfo `json:"nodes"`
	LastUpdate *noVal      `json:"last_update"`
	envelope
}

// nodeInfo is v0.0.44_node.
type nodeInfo struct {
	Name            string   `json:"name"`
	Hostname        string   `json:"hostname"`
	ClusterName     string   `json:"cluster_name"`
	State           []string `json:"state"`
	CPUs            int32    `json:"cpus"`
	EffectiveCPUs   int32    `json:"effective_cpus"`
	Cores           int32    `json:"cores"`
	Sockets         int32    `json:"sockets"`
	Threads         int32    `json:"threads"`
	Boards          int32    `json:"boards"`
	RealMemory      int64    `json:"real_memory"`
	AllocMemory     int64    `json:"alloc_memory"`
	AllocCPUs       int32    `json:"alloc_cpus"`
	AllocIdleCPUs   int32    `json:"alloc_idle_cpus"`
	Features        []string `json:"features"`
	ActiveFeatures  []string `json:"active_features"`
	Partitions      []string `json:"partitions"`
	Gres            string   `json:"gres"`
	GresUsed        string   `json:"gres_used"`
	GresDrained     string   `json:"gres_drained"`
	Reason          string   `json:"reason"`
	ReasonSetBy     string   `json:"reason_set_by_user"`
	ReasonChangedAt *noVal   `json:"reason_changed_at"`
	LastBusy        *noVal   `json:"last_busy"`
	Tres            string   `json:"tres"`
	TresUsed        string   `json:"tres_used"`
}

type partitionsResp struct {
	Partitions []*partitionInfo `json:"partitions"`
	LastUpdate *noVal           `json:"last_update"`
	envelope
}

// partitionInfo is v0.0.44_partition_info.
type partitionInfo struct {
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	Nodes   struct {
		Configured string `json:"configured"`
		Total      int32  `json:"total"`
	} `json:"nodes"`
	CPUs struct {
		Total int32 `json:"total"`
	} `json:"cpus"`
	Tres struct {
		BillingWeights string `json:"billing_weights"`
		Configured     string `json:"configured"`
	} `json:"tres"`
	Defaults struct {
		MemoryPerCPU          int64  `json:"memory_per_cpu"`
		PartitionMemoryPerCPU *noVal `json:"partition_memory_per_cpu"`
		Time                  *noVal `json:"time"`
	} `json:"defaults"`
	GraceTime int32 `json:"grace_time"`
	Maximums  struct {
		Nodes *noVal `json:"nodes"`
		Time  *noVal `json:"time"`
	} `json:"maximums"`
	Minimums struct {
		Nodes int32 `json:"nodes"`
	} `json:"minimums"`
	Priority struct {
		JobFactor int32 `json:"job_factor"`
		Tier      int32 `json:"tier"`
	} `json:"priority"`
	Partition struct {
		State []string `json:"state"`
	} `json:"partition"`
}
