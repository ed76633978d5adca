package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The raw* types mirror the file; durations and sizes stay strings until
// build parses them, so their errors can name the field and line.
type rawCluster struct {
	Cluster     string         `yaml:"cluster"`
	Controller  rawController  `yaml:"controller"`
	Controllers []string       `yaml:"controllers"`
	Auth        rawAuth        `yaml:"auth"`
	Admins      []string       `yaml:"admins"`
	Operators   []string       `yaml:"operators"`
	Partitions  []rawPartition `yaml:"partitions"`
	Nodes       []rawNodeSet   `yaml:"nodes"`
	Accounts    []rawAccount   `yaml:"accounts"`
	QOS         []rawQOS       `yaml:"qos"`
	// RootQOS is the root association's QOS list (absent: every QOS).
	RootQOS           []string       `yaml:"rootQos"`
	Priority          rawPriority    `yaml:"priority"`
	Scheduler         rawScheduler   `yaml:"scheduler"`
	Health            rawHealth      `yaml:"health"`
	Reclamation       rawReclamation `yaml:"reclamation"`
	NodeDownTimeout   string         `yaml:"nodeDownTimeout"`
	HeartbeatInterval string         `yaml:"heartbeatInterval"`
	EventRetention    string         `yaml:"eventRetention"`
	MinJobAge         string         `yaml:"minJobAge"`
	RequeueOnNodeFail *bool          `yaml:"requeueOnNodeFail"`
	// Job limits (slurm.conf names; see JobLimits).
	MaxArraySize  *int `yaml:"maxArraySize"`
	MaxJobCount   *int `yaml:"maxJobCount"`
	MaxScriptSize *int `yaml:"maxScriptSize"`
	MaxNameLength *int `yaml:"maxNameLength"`
}

type rawController struct {
	Listen   string `yaml:"listen"`
	StateDir string `yaml:"stateDir"`
	Metrics  string `yaml:"metrics"`
}

type rawAuth struct {
	KeyFile  string `yaml:"keyFile"`
	TokenTTL string `yaml:"tokenTTL"`
}

type rawPartition struct {
	Name              string `yaml:"name"`
	Nodes             string `yaml:"nodes"`
	Default           bool   `yaml:"default"`
	MaxTime           string `yaml:"maxTime"`
	DefaultTime       string `yaml:"defaultTime"`
	PriorityTier      *int   `yaml:"priorityTier"`      // Slurm's default: 1
	PriorityJobFactor *int   `yaml:"priorityJobFactor"` // Slurm's default: 1
	MinNodes          int    `yaml:"minNodes"`
	MaxNodes          int    `yaml:"maxNodes"`
	DefMemPerCPU      string `yaml:"defMemPerCPU"`
	BillingWeights    string `yaml:"billingWeights"`
	State             string `yaml:"state"`
	// What scontrol sets at run time, so config export writes it back.
	AllowAccounts []string `yaml:"allowAccounts"`
	DenyAccounts  []string `yaml:"denyAccounts"`
	AllowQOS      []string `yaml:"allowQos"`
	DenyQOS       []string `yaml:"denyQos"`
	OverSubscribe string   `yaml:"overSubscribe"`
}

type rawNodeSet struct {
	Names    string   `yaml:"names"`
	Features []string `yaml:"features"`
	CPUs     int      `yaml:"cpus"`
	Memory   string   `yaml:"memory"`
	GPUs     int      `yaml:"gpus"`
	GPUType  string   `yaml:"gpuType"`
}

type rawAccount struct {
	Name     string       `yaml:"name"`
	Parent   string       `yaml:"parent"`
	Shares   float64      `yaml:"shares"`
	Users    []rawUser    `yaml:"users"`
	Accounts []rawAccount `yaml:"accounts"`
	Limits   string       `yaml:"limits"`
	// Description and Organization are sacctmgr's (shown, not used).
	Description  string `yaml:"description"`
	Organization string `yaml:"organization"`
	// QOS and DefaultQOS are the association's allowed and default QOS.
	QOS        []string `yaml:"qos"`
	DefaultQOS string   `yaml:"defaultQos"`
}

// rawUser is a user name, or a mapping with name and shares.
type rawUser struct {
	Name   string `yaml:"name"`
	Shares string `yaml:"shares"`
	// Default makes this account the user's default.
	Default bool `yaml:"default"`
	// QOS, DefaultQOS and Limits are the user association's own.
	QOS        []string `yaml:"qos"`
	DefaultQOS string   `yaml:"defaultQos"`
	Limits     string   `yaml:"limits"`
}

func (u *rawUser) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		u.Name = n.Value
		return nil
	case yaml.MappingNode:
		type plain rawUser
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*u = rawUser(p)
		return nil
	}
	return fmt.Errorf("line %d: a user is a name or {name, shares}", n.Line)
}

type rawQOS struct {
	Name           string   `yaml:"name"`
	Priority       int      `yaml:"priority"`
	MaxGPUsPerUser int      `yaml:"maxGPUsPerUser"`
	Preempt        []string `yaml:"preempt"`
	PreemptMode    string   `yaml:"preemptMode"`
	GraceTime      string   `yaml:"graceTime"`
	Limits         string   `yaml:"limits"`
	DenyOnLimit    bool     `yaml:"denyOnLimit"`
}

type rawPriority struct {
	Weights    rawWeights `yaml:"weights"`
	MaxAge     string     `yaml:"maxAge"`
	HalfLife   string     `yaml:"halfLife"`
	FavorSmall bool       `yaml:"favorSmall"`
	FairShare  string     `yaml:"fairShare"`
	Billing    string     `yaml:"billing"`
}

type rawWeights struct {
	Age       *float64           `yaml:"age"`
	FairShare *float64           `yaml:"fairshare"`
	JobSize   *float64           `yaml:"jobSize"`
	Partition *float64           `yaml:"partition"`
	QOS       *float64           `yaml:"qos"`
	TRES      map[string]float64 `yaml:"tres"`
}

type rawScheduler struct {
	Backfill            string `yaml:"backfill"`
	Interval            string `yaml:"interval"`
	MinInterval         string `yaml:"minInterval"`
	ReservePerPartition int    `yaml:"reservePerPartition"`
	MaxReservations     int    `yaml:"maxReservations"`
	Window              string `yaml:"window"`
	CandidateLimit      int    `yaml:"candidateLimit"`
	KillInvalidDepend   bool   `yaml:"killInvalidDepend"`
	PreemptType         string `yaml:"preemptType"`
	PreemptMode         string `yaml:"preemptMode"`
	PreemptGraceTime    string `yaml:"preemptGraceTime"`
	PreemptExemptTime   string `yaml:"preemptExemptTime"`
}
