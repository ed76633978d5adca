package gres

import "time"

// Sample is one reading of a device's telemetry. Fields a driver cannot read
// are left at their zero value and listed in Missing, so "not measured" is
// never mistaken for "zero".
type Sample struct {
	UUID              string    `json:"uuid"`
	Time              time.Time `json:"time"`
	UtilizationPct    float64   `json:"utilizationPct"`
	MemoryUsedBytes   uint64    `json:"memoryUsedBytes"`
	MemoryTotalBytes  uint64    `json:"memoryTotalBytes"`
	TemperatureC      float64   `json:"temperatureC"`
	PowerW            float64   `json:"powerW"`
	CorrectedErrors   uint64    `json:"correctedErrors"`
	UncorrectedErrors uint64    `json:"uncorrectedErrors"`
	Missing           []string  `json:"missing,omitempty"`
}

// Severity orders conditions by how urgently they take a device out of service.
type Severity int

// Severities, least to most severe.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityFatal
)

func (s Severity) String() string {
	switch s {
	case SeverityInfo:
		return "info"
	case SeverityWarning:
		return "warning"
	case SeverityFatal:
		return "fatal"
	}
	return "unknown"
}

// MarshalText renders the severity by name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Condition is an asynchronous health event about one device (an XID, a RAS
// error, a thermal event), vendor-neutral in shape while keeping the
// vendor's own code so operators can look it up.
type Condition struct {
	UUID     string    `json:"uuid"`
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"` // e.g. "xid", "ras", "ecc", "thermal", "lost"
	Code     string    `json:"code"` // the vendor's code, e.g. "79"
	Severity Severity  `json:"severity"`
	Message  string    `json:"message"`
	// Action is the remedy the driver recommends: "none", "reset", "reboot", "drain".
	Action string `json:"action,omitempty"`
	// Metric, when the driver names one, is a per-device gauge the
	// condition sets in the node's telemetry (an XID sets dcgm-exporter's
	// last-XID gauge), so a vendor's own series need no code outside its
	// driver.
	Metric ConditionMetric `json:"metric,omitzero"`
}

// ConditionMetric is a gauge named by the driver: a Prometheus metric name,
// its help text, and the value the condition sets it to.
type ConditionMetric struct {
	Name  string  `json:"name"`
	Help  string  `json:"help,omitempty"`
	Value float64 `json:"value"`
}

// Diagnosis is the outcome of an active check on one device.
type Diagnosis struct {
	UUID   string          `json:"uuid"`
	Passed bool            `json:"passed"`
	Level  int             `json:"level"`
	Tests  []DiagnosisTest `json:"tests"`
}

// DiagnosisTest is one named check inside a Diagnosis.
type DiagnosisTest struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Message string `json:"message,omitempty"`
}
