package jobspec

import (
	"time"

	"github.com/parityhpc/parity/gres"
)

// MemPer says what a memory request is counted against.
type MemPer string

// Memory scopes: --mem (per node), --mem-per-cpu, --mem-per-gpu.
const (
	MemPerNode MemPer = "node"
	MemPerCPU  MemPer = "cpu"
	MemPerGPU  MemPer = "gpu"
)

// Memory is the job's memory request; the three options are mutually
// exclusive, so it holds at most one. The zero value means "not given"
// (partition defaults apply); Per node with MB 0 means all of each node's
// memory (--mem=0).
type Memory struct {
	Per MemPer `json:"per"`
	MB  int64  `json:"mb"`
}

// IsZero reports whether no memory option was given.
func (m Memory) IsZero() bool { return m.Per == "" }

// AllOfNode reports --mem=0.
func (m Memory) AllOfNode() bool { return m.Per == MemPerNode && m.MB == 0 }

// GPUOptions are the GPU-related options as typed; the parsed form is
// Request.GRES. They feed SLURM_GPUS and friends, which echo the request.
type GPUOptions struct {
	GRES          string `json:"gres,omitempty"`          // --gres
	GPUs          string `json:"gpus,omitempty"`          // -G/--gpus
	GPUsPerNode   string `json:"gpusPerNode,omitempty"`   // --gpus-per-node
	GPUsPerTask   string `json:"gpusPerTask,omitempty"`   // --gpus-per-task
	GPUsPerSocket string `json:"gpusPerSocket,omitempty"` // --gpus-per-socket
	// GPUBind is --gpu-bind as written (validated; see ParseGPUBind): job
	// steps bind their tasks to GPUs by it.
	GPUBind string `json:"gpuBind,omitempty"`
}

// Exclusive values (--exclusive[=user|mcs|topo]).
const (
	ExclusiveNode = "node" // bare --exclusive
	ExclusiveUser = "user"
	ExclusiveMCS  = "mcs"
	ExclusiveTopo = "topo"
)

// Open modes for the output files.
const (
	OpenTruncate = "truncate"
	OpenAppend   = "append"
)

// Request is a fully resolved batch job request: every option after
// directives, SBATCH_* variables and the command line were combined, with
// the defaults Slurm applies without cluster knowledge. Cluster-dependent
// checks (partition exists, limits, GPU counts per node) are the
// controller's. Sources maps each field's JSON name to where its value came
// from: "#SBATCH line N", "SBATCH_X", "command line", "default" or
// "derived from --opt".
type Request struct {
	Name         string   `json:"name"`
	User         string   `json:"user,omitempty"`
	Account      string   `json:"account,omitempty"`
	Partitions   []string `json:"partitions,omitempty"`
	QOS          []string `json:"qos,omitempty"`
	Reservations []string `json:"reservations,omitempty"`

	Nodes         NodeRange `json:"nodes,omitzero"`
	NTasks        int       `json:"ntasks"`
	NTasksPerNode int       `json:"ntasksPerNode,omitempty"`
	CPUsPerTask   int       `json:"cpusPerTask"`
	Mem           Memory    `json:"mem,omitzero"`

	// TimeLimit is 0 when not given (partition default) and Unlimited
	// for no limit; TimeMin is 0 when not given.
	TimeLimit Duration `json:"timeLimit,omitzero"`
	TimeMin   Duration `json:"timeMin,omitzero"`

	GPU          GPUOptions      `json:"gpuOptions,omitzero"`
	GRES         gres.JobRequest `json:"gres,omitzero"`
	CPUsPerGPU   int             `json:"cpusPerGpu,omitempty"`
	NTasksPerGPU int             `json:"ntasksPerGpu,omitempty"`
	GRESFlags    string          `json:"gresFlags,omitempty"`

	Constraint    *Constraint `json:"constraint,omitempty"`
	Exclusive     string      `json:"exclusive,omitempty"`
	Oversubscribe bool        `json:"oversubscribe,omitempty"`
	Contiguous    bool        `json:"contiguous,omitempty"`
	Switches      int         `json:"switches,omitempty"`
	SwitchWait    Duration    `json:"switchWait,omitzero"`
	// NodeList (-w) and Exclude (-x) are expanded host names; NodeList is
	// sorted and de-duplicated, as Slurm treats it as a set.
	NodeList []string `json:"nodeList,omitempty"`
	Exclude  []string `json:"exclude,omitempty"`

	Array            *Array      `json:"array,omitempty"`
	Dependency       *Dependency `json:"dependency,omitempty"`
	KillOnInvalidDep bool        `json:"killOnInvalidDep,omitempty"`
	// KillOnInvalidDepBoth is --kill-on-invalid-dep given both yes and
	// no: sbatch keeps a flag for each, and scontrol prints both.
	KillOnInvalidDepBoth bool      `json:"killOnInvalidDepBoth,omitempty"`
	Begin                time.Time `json:"begin,omitzero"`
	Deadline             time.Time `json:"deadline,omitzero"`
	Nice                 int       `json:"nice,omitempty"`
	Hold                 bool      `json:"hold,omitempty"`
	Requeue              bool      `json:"requeue"`
	RequeueExpedite      bool      `json:"requeueExpedite,omitempty"`
	Signal               *Signal   `json:"signal,omitempty"`
	NoKill               bool      `json:"noKill,omitempty"`

	// Output, Error and Input are unexpanded patterns (see Expand).
	Output   string `json:"output"`
	Error    string `json:"error"`
	Input    string `json:"input"`
	OpenMode string `json:"openMode"`
	WorkDir  string `json:"workDir"`

	Export Export `json:"export"`
	// Env is the environment the job starts from: the submit environment
	// filtered by Export (see Export.Apply).
	Env map[string]string `json:"env,omitempty"`
	// GetUserEnv asks the node to load the user's login environment
	// under Env; GetUserEnvArg is its optional timeout/mode argument.
	GetUserEnv    bool   `json:"getUserEnv,omitempty"`
	GetUserEnvArg string `json:"getUserEnvArg,omitempty"`

	MailType []string `json:"mailType,omitempty"`
	MailUser string   `json:"mailUser,omitempty"`
	Comment  string   `json:"comment,omitempty"`
	// Clusters is -M: the submitting client checks each names the
	// controller's cluster (sbatch asks slurmdbd), and prints id;cluster.
	Clusters []string `json:"clusters,omitempty"`

	// Client behaviour: what sbatch prints and whether it waits.
	Parsable  bool `json:"parsable,omitempty"`
	TestOnly  bool `json:"testOnly,omitempty"`
	ParseOnly bool `json:"parseOnly,omitempty"`
	Wait      bool `json:"wait,omitempty"`
	Quiet     bool `json:"quiet,omitempty"`
	Verbose   int  `json:"verbose,omitempty"`

	// Script is the batch script; it is not part of the JSON form.
	Script     []byte `json:"-"`
	ScriptPath string `json:"scriptPath,omitempty"`
	// ScriptFile is the file the script was read from, absolute: what
	// scontrol shows as Command= ("" for --wrap and standard input).
	ScriptFile string   `json:"scriptFile,omitempty"`
	ScriptArgs []string `json:"scriptArgs,omitempty"`
	Wrap       string   `json:"wrap,omitempty"`

	SubmitDir  string    `json:"submitDir,omitempty"`
	SubmitHost string    `json:"submitHost,omitempty"`
	SubmitTime time.Time `json:"submitTime,omitzero"`

	// Extra holds options Parity accepts but does not interpret, by long
	// name, so real scripts still submit; each adds a warning.
	Extra    map[string]string `json:"extra,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
	// Empty lists the fields (JSON names) whose last value was empty:
	// Slurm stores "" for them, which scontrol prints (Account=) where a
	// field never given prints (null).
	Empty   []string          `json:"empty,omitempty"`
	Sources map[string]string `json:"sources"`
}

// Explicit reports whether field (a JSON name) was set by the user rather
// than defaulted or derived.
func (r *Request) Explicit(field string) bool {
	src, ok := r.Sources[field]
	return ok && src != SourceDefault && !isDerived(src)
}

// Source values that are not user input.
const (
	SourceDefault = "default"
	SourceCLI     = "command line"
)

func isDerived(src string) bool { return len(src) > 8 && src[:8] == "derived " }
