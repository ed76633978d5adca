package rest

// The v0.0.44 objects Parity fills, named after their schemas in the
// OpenAPI document (v0.0.44_<name>). Only the properties Parity can give
// a Slurm meaning are declared; omitempty keeps the rest out of the answer
// rather than sending zeros a client would take for facts.

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
