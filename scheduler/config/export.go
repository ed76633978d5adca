package config

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/scheduler/policy"
)

// Export writes base (a cluster file) back with its partitions, accounts
// and qos sections replaced by cur's: the run-time state a controller
// holds once scontrol and sacctmgr have changed it. Everything else in
// base stays as written, comments included, so Parse of the result gives
// cur's partitions, accounts and QOS and base's everything else.
func Export(base []byte, cur *Cluster) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("config: export: the base file: %w", err)
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config: export: the base file is not a mapping")
	}
	sections := []struct {
		key string
		v   any
	}{
		{"partitions", exportPartitions(cur.Partitions)},
		{"accounts", exportAccounts(cur.Accounts)},
		{"qos", exportQOS(cur.QOS)},
	}
	if !slices.Equal(cur.Root(), cur.QOSNames()) || hasKey(root, "rootQos") {
		sections = append(sections, struct {
			key string
			v   any
		}{"rootQos", cur.Root()})
	}
	for _, s := range sections {
		var n yaml.Node
		if err := n.Encode(s.v); err != nil {
			return nil, fmt.Errorf("config: export %s: %w", s.key, err)
		}
		setKey(root, s.key, &n)
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("config: export: %w", err)
	}
	return out.Bytes(), enc.Close()
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// setKey replaces key's value in a mapping node, or appends the key.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// durationText is a duration as the file takes it back exactly.
func durationText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// partOut is rawPartition as written, what is unset left out.
type partOut struct {
	Name              string   `yaml:"name"`
	Nodes             string   `yaml:"nodes"`
	Default           bool     `yaml:"default,omitempty"`
	MaxTime           string   `yaml:"maxTime,omitempty"`
	DefaultTime       string   `yaml:"defaultTime,omitempty"`
	PriorityTier      int      `yaml:"priorityTier"`
	PriorityJobFactor int      `yaml:"priorityJobFactor"`
	MinNodes          int      `yaml:"minNodes,omitempty"`
	MaxNodes          int      `yaml:"maxNodes,omitempty"`
	DefMemPerCPU      string   `yaml:"defMemPerCPU,omitempty"`
	BillingWeights    string   `yaml:"billingWeights,omitempty"`
	State             string   `yaml:"state,omitempty"`
	AllowAccounts     []string `yaml:"allowAccounts,omitempty"`
	DenyAccounts      []string `yaml:"denyAccounts,omitempty"`
	AllowQOS          []string `yaml:"allowQos,omitempty"`
	DenyQOS           []string `yaml:"denyQos,omitempty"`
	OverSubscribe     string   `yaml:"overSubscribe,omitempty"`
}

func exportPartitions(list []Partition) []partOut {
	out := make([]partOut, 0, len(list))
	for _, p := range list {
		r := partOut{Name: p.Name, Nodes: p.Nodes, Default: p.Default, MaxTime: durationText(p.MaxTime),
			DefaultTime: durationText(p.DefaultTime), PriorityTier: p.PriorityTier, PriorityJobFactor: p.PriorityJobFactor, MinNodes: p.MinNodes,
			MaxNodes: p.MaxNodes, BillingWeights: p.BillingWeights, AllowAccounts: p.AllowAccounts, DenyAccounts: p.DenyAccounts,
			AllowQOS: p.AllowQOS, DenyQOS: p.DenyQOS, OverSubscribe: p.OverSubscribe}
		if p.MaxTime == 0 {
			r.MaxTime = "unlimited"
		}
		if p.DefMemPerCPU > 0 {
			r.DefMemPerCPU = strconv.FormatInt(p.DefMemPerCPU, 10) + "M"
		}
		switch st := strings.ToLower(p.State); {
		case st != "" && st != "up":
			r.State = st
		case st == "" && p.Down:
			r.State = "down"
		}
		out = append(out, r)
	}
	return out
}

// exportAccount is rawAccount as written (users with their shares and
// default flag, limits as sacctmgr settings), flat with parents named.
type exportAccount struct {
	Name         string       `yaml:"name"`
	Parent       string       `yaml:"parent,omitempty"`
	Shares       float64      `yaml:"shares,omitempty"`
	Description  string       `yaml:"description,omitempty"`
	Organization string       `yaml:"organization,omitempty"`
	Limits       string       `yaml:"limits,omitempty"`
	QOS          []string     `yaml:"qos,omitempty"`
	DefaultQOS   string       `yaml:"defaultQos,omitempty"`
	Users        []exportUser `yaml:"users,omitempty"`
}

type exportUser struct {
	Name       string   `yaml:"name"`
	Shares     string   `yaml:"shares,omitempty"`
	Default    bool     `yaml:"default,omitempty"`
	QOS        []string `yaml:"qos,omitempty"`
	DefaultQOS string   `yaml:"defaultQos,omitempty"`
	Limits     string   `yaml:"limits,omitempty"`
}

func exportAccounts(list []Account) []exportAccount {
	out := make([]exportAccount, 0, len(list))
	for _, a := range list {
		e := exportAccount{Name: a.Name, Parent: a.Parent, Shares: a.Shares, Description: a.Description,
			Organization: a.Organization, Limits: policy.FormatLimitSet(a.Limits), QOS: a.QOS, DefaultQOS: a.DefaultQOS}
		for _, u := range a.Users {
			eu := exportUser{Name: u.Name, Default: u.Default, QOS: u.QOS, DefaultQOS: u.DefaultQOS, Limits: policy.FormatLimitSet(u.Limits)}
			switch {
			case u.SharesParent:
				eu.Shares = "parent"
			case u.Shares != 0:
				eu.Shares = strconv.FormatFloat(u.Shares, 'f', -1, 64)
			}
			e.Users = append(e.Users, eu)
		}
		out = append(out, e)
	}
	return out
}

type qosOut struct {
	Name           string   `yaml:"name"`
	Priority       int      `yaml:"priority,omitempty"`
	MaxGPUsPerUser int      `yaml:"maxGPUsPerUser,omitempty"`
	Preempt        []string `yaml:"preempt,omitempty"`
	PreemptMode    string   `yaml:"preemptMode,omitempty"`
	GraceTime      string   `yaml:"graceTime,omitempty"`
	Limits         string   `yaml:"limits,omitempty"`
	DenyOnLimit    bool     `yaml:"denyOnLimit,omitempty"`
}

func exportQOS(list []QOS) []qosOut {
	out := make([]qosOut, 0, len(list))
	for _, q := range list {
		out = append(out, qosOut{Name: q.Name, Priority: q.Priority, MaxGPUsPerUser: q.MaxGPUsPerUser, Preempt: q.Preempt,
			PreemptMode: q.PreemptMode, GraceTime: durationText(q.GraceTime), Limits: policy.FormatLimitSet(q.Limits), DenyOnLimit: q.DenyOnLimit})
	}
	return out
}
