package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EnvCase is one job run to its end: sbatch options, and the options of
// one srun step inside it. The job's script writes the SLURM_*
// environment its batch step sees, then each of the step's tasks writes
// its own.
type EnvCase struct {
	ID   string   `json:"id"`
	Job  []string `json:"job"`
	Step []string `json:"step"`
	// Salloc runs the script as salloc's command (here, with the
	// allocation's variables) instead of as a batch job.
	Salloc bool `json:"salloc,omitempty"`
	// Slurm is Slurm's recorded answer (nil before recording).
	Slurm *EnvAnswer `json:"slurm,omitempty"`
}

// EnvAnswer is what one side's job saw.
type EnvAnswer struct {
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
	// Batch is the batch step's SLURM_* variables; Tasks each step
	// task's, by SLURM_PROCID. StepFailed says srun exited non-zero.
	Batch      map[string]string   `json:"batch,omitempty"`
	Tasks      []map[string]string `json:"tasks,omitempty"`
	StepFailed bool                `json:"stepFailed,omitempty"`
	// Dir and JobID are the case's directory and job id on that side.
	Dir   string `json:"dir,omitempty"`
	JobID string `json:"jobId,omitempty"`
}

// granted is salloc's word of its allocation.
var granted = regexp.MustCompile(`Granted job allocation (\d+)`)

// envCaseTimeout bounds one env case: its job runs a few commands.
const envCaseTimeout = 2 * time.Minute

// envScript is the job: its environment, then the step's tasks'. Under
// salloc it runs here, its "batch" environment salloc's.
func envScript(step []string) string {
	return "#!/bin/bash\nprintenv | grep '^SLURM' | sort > batch.env\n" +
		"srun " + strings.Join(step, " ") + " bash -c 'printenv | grep ^SLURM | sort > task.$SLURM_PROCID.env'\n" +
		"echo $? > step.rc\n"
}

// envJobOptions and envStepOptions are the generator's vocabulary: the
// counts and GPU requests whose variables a job and a step derive.
var (
	envJobOptions = [][]string{
		{"-N", "1"}, {"-N", "2"}, {"-n", "1"}, {"-n", "2"}, {"-n", "4"}, {"-c", "2"}, {"-c", "4"},
		{"--ntasks-per-node=2"}, {"--gpus-per-node=1"}, {"--gpus-per-node=2"}, {"-G", "2"}, {"--gpus-per-task=1"},
		{"--gres=gpu:1"}, {"--mem=2000"}, {"--mem-per-cpu=1000"}, {"-J", "envjob"}, {"--cpus-per-gpu=2"},
	}
	envStepOptions = [][]string{
		{}, {"-n", "1"}, {"-n", "2"}, {"-N", "1"}, {"-c", "1"}, {"--ntasks-per-node=1"}, {"--gpus-per-task=1"},
		{"-G", "1"}, {"--mem=500"}, {"-l"},
	}
)

// GenerateEnv returns n env cases drawn with seed.
func GenerateEnv(seed uint64, n int) []EnvCase {
	r := rand.New(rand.NewPCG(seed, seed^0x51ed2701f3a5c9b7))
	out := make([]EnvCase, 0, n)
	for i := range n {
		c := EnvCase{ID: fmt.Sprintf("e%03d", i)}
		for _, j := range r.Perm(len(envJobOptions))[:1+r.IntN(3)] {
			c.Job = append(c.Job, envJobOptions[j]...)
		}
		c.Step = slices.Clone(envStepOptions[r.IntN(len(envStepOptions))])
		c.Salloc = i%4 == 3
		out = append(out, c)
	}
	return out
}

// RunEnv runs c on s in its own directory under base, waiting for the job
// to end (sbatch --wait), and reads what its steps wrote.
func RunEnv(ctx context.Context, s Side, base string, c EnvCase) (*EnvAnswer, error) {
	// A job that never starts would hold sbatch --wait for good.
	ctx, cancel := context.WithTimeout(ctx, envCaseTimeout)
	defer cancel()
	dir := filepath.Join(base, c.ID)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, scriptName), []byte(envScript(c.Step)), 0o755); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	argv := append([]string{"sbatch", "--wait", "--parsable", "-o", "out.txt"}, c.Job...)
	if c.Salloc {
		argv = append([]string{"salloc"}, c.Job...)
	}
	out, errs, code := s.Run(ctx, dir, nil, append(argv, "./"+scriptName)...)
	a := &EnvAnswer{Dir: dir, JobID: strings.TrimSpace(firstLine(out))}
	if c.Salloc {
		a.JobID = ""
		if m := granted.FindStringSubmatch(errs); m != nil {
			a.JobID = m[1]
		}
	}
	if a.JobID == "" {
		a.Error = firstLine(errs)
		return a, nil
	}
	a.Accepted = true
	if code != 0 {
		a.StepFailed = true // the script's own exit status
	}
	var err error
	if a.Batch, err = readEnvFile(filepath.Join(dir, "batch.env")); err != nil {
		return nil, fmt.Errorf("compat: %s: %w", c.ID, err)
	}
	for i := 0; ; i++ {
		t, err := readEnvFile(filepath.Join(dir, "task."+strconv.Itoa(i)+".env"))
		if err != nil {
			break
		}
		a.Tasks = append(a.Tasks, t)
	}
	if rc, err := os.ReadFile(filepath.Join(dir, "step.rc")); err != nil || strings.TrimSpace(string(rc)) != "0" {
		a.StepFailed = true
	}
	return a, nil
}

func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = v
		}
	}
	return out, nil
}

// EnvCorpusPath is the committed env corpus, relative to this package.
const EnvCorpusPath = "testdata/envcorpus.jsonl"

// SaveEnv writes env cases as a corpus, one a line.
func SaveEnv(path string, cases []EnvCase) error {
	var b strings.Builder
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("compat: %s: %w", c.ID, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("compat: %w", err)
	}
	return nil
}

// LoadEnv reads an env corpus.
func LoadEnv(path string) ([]EnvCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	var out []EnvCase
	for n, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c EnvCase
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			return nil, fmt.Errorf("compat: %s:%d: %w", path, n+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}
