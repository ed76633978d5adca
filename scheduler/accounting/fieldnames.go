package accounting

import (
	"fmt"
	"slices"
	"strings"
)

// slurmFields is every field Slurm 22.05's sacct --helpformat lists
// (testdata/slurm2205_helpformat.txt, recorded on the anchor), in its
// order: sacct takes the first of them a --format item is a
// case-insensitive prefix of ("stat" is State, "e" Elapsed), so the
// order decides what an abbreviation means.
var slurmFields = []string{
	"Account", "AdminComment", "AllocCPUS", "AllocNodes", "AllocTRES", "AssocID", "AveCPU", "AveCPUFreq",
	"AveDiskRead", "AveDiskWrite", "AvePages", "AveRSS", "AveVMSize", "BlockID", "Cluster", "Comment",
	"Constraints", "ConsumedEnergy", "ConsumedEnergyRaw", "Container", "CPUTime", "CPUTimeRAW", "DBIndex",
	"DerivedExitCode", "Elapsed", "ElapsedRaw", "Eligible", "End", "ExitCode", "Flags", "GID", "Group", "JobID",
	"JobIDRaw", "JobName", "Layout", "MaxDiskRead", "MaxDiskReadNode", "MaxDiskReadTask", "MaxDiskWrite",
	"MaxDiskWriteNode", "MaxDiskWriteTask", "MaxPages", "MaxPagesNode", "MaxPagesTask", "MaxRSS", "MaxRSSNode",
	"MaxRSSTask", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "McsLabel", "MinCPU", "MinCPUNode",
	"MinCPUTask", "NCPUS", "NNodes", "NodeList", "NTasks", "Partition", "Priority", "QOS", "QOSRAW", "Reason",
	"ReqCPUFreq", "ReqCPUFreqGov", "ReqCPUFreqMax", "ReqCPUFreqMin", "ReqCPUS", "ReqMem", "ReqNodes", "ReqTRES",
	"Reservation", "ReservationId", "Reserved", "ResvCPU", "ResvCPURAW", "Start", "State", "Submit",
	"SubmitLine", "Suspended", "SystemComment", "SystemCPU", "Timelimit", "TimelimitRaw", "TotalCPU",
	"TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode", "TRESUsageInMaxTask", "TRESUsageInMin",
	"TRESUsageInMinNode", "TRESUsageInMinTask", "TRESUsageInTot", "TRESUsageOutAve", "TRESUsageOutMax",
	"TRESUsageOutMaxNode", "TRESUsageOutMaxTask", "TRESUsageOutMin", "TRESUsageOutMinNode",
	"TRESUsageOutMinTask", "TRESUsageOutTot", "UID", "User", "UserCPU", "WCKey", "WCKeyID", "WorkDir",
}

// FieldError is a --format item sacct cannot print: one Slurm does not
// know (refused in Slurm's words), or one Slurm knows but Parity does not
// record. It wraps ErrBadFormat.
type FieldError struct {
	Name string
	// Field is the Slurm field the item names when NotRecorded.
	Field       string
	NotRecorded bool
}

func (e *FieldError) Error() string {
	if e.NotRecorded {
		return fmt.Sprintf("Field %q (%s) is not recorded by Parity; see --helpformat for the fields it records", e.Name, e.Field)
	}
	return fmt.Sprintf("Invalid field requested: %q", e.Name)
}

// Unwrap makes errors.Is(err, ErrBadFormat) hold.
func (e *FieldError) Unwrap() error { return ErrBadFormat }

// matchOrder is every name a --format item may abbreviate: Slurm's fields
// and Parity's own, in sacct's (case-insensitive alphabetical) order.
func matchOrder() []string {
	names := slices.Clone(slurmFields)
	for _, f := range fields {
		if !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return names
}

// resolveField finds the field a --format item names as sacct does: the
// first name, in sacct's order, the item is a case-insensitive prefix of.
func resolveField(item string) (Field, error) {
	for _, name := range matchOrder() {
		if len(item) > len(name) || !strings.EqualFold(item, name[:len(item)]) {
			continue
		}
		if f, ok := LookupField(name); ok {
			return f, nil
		}
		return Field{}, &FieldError{Name: item, Field: name, NotRecorded: true}
	}
	return Field{}, &FieldError{Name: item}
}
