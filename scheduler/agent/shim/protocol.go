package shim

// The agent and its node's supervisor speak JSON lines over a unix socket
// in the spool (root only). The agent sends requests carrying an id; the
// supervisor answers each with a response carrying the same id, and sends
// events (id 0) on its own: a hello with its pid when the agent connects,
// and one "ended" per job once the job's status file is final.

// Request operations.
const (
	opStart = "start" // start Config; the response has the job's pid
	opList  = "list"  // the jobs running now
)

// Event kinds.
const (
	eventHello = "hello"
	eventEnded = "ended"
)

type request struct {
	ID     uint64  `json:"id"`
	Op     string  `json:"op"`
	Config *Config `json:"config,omitempty"`
}

type message struct {
	// ID answers a request; 0 marks an event.
	ID    uint64 `json:"id,omitempty"`
	Event string `json:"event,omitempty"`
	// Job names the job of an ended event.
	Job string `json:"job,omitempty"`
	// Pid is the job's leader (start) or the supervisor's own (hello).
	Pid   int    `json:"pid,omitempty"`
	Start string `json:"start,omitempty"`
	// StartError says the job could not be started; its status file says
	// so too, and its ended event follows.
	StartError string       `json:"startError,omitempty"`
	Jobs       []RunningJob `json:"jobs,omitempty"`
	// Error refuses a request that was malformed or made no sense.
	Error string `json:"error,omitempty"`
}

// RunningJob is one job a supervisor runs.
type RunningJob struct {
	JobID string `json:"job"`
	Pid   int    `json:"pid"`
}
