package core

// Reason is a Slurm pending reason as squeue prints it (%r).
type Reason string

// Pending reasons the core assigns. The names are Slurm's, so scripts that
// parse squeue output keep working.
const (
	ReasonNone                     Reason = "None"
	ReasonPriority                 Reason = "Priority"
	ReasonResources                Reason = "Resources"
	ReasonDependency               Reason = "Dependency"
	ReasonDependencyNeverSatisfied Reason = "DependencyNeverSatisfied"
	ReasonBeginTime                Reason = "BeginTime"
	ReasonJobHeldUser              Reason = "JobHeldUser"
	ReasonJobHeldAdmin             Reason = "JobHeldAdmin"
	ReasonReqNodeNotAvail          Reason = "ReqNodeNotAvail"
	ReasonReservation              Reason = "Reservation"
	ReasonPartitionTimeLimit       Reason = "PartitionTimeLimit"
	ReasonPartitionNodeLimit       Reason = "PartitionNodeLimit"
	ReasonPartitionDown            Reason = "PartitionDown"
	ReasonPartitionConfig          Reason = "PartitionConfig"
	ReasonBadConstraints           Reason = "BadConstraints"
	ReasonQOSMaxGRESPerUser        Reason = "QOSMaxGRESPerUser"
	ReasonInvalidQOS               Reason = "InvalidQOS"
	ReasonAccountingPolicy         Reason = "AccountingPolicy"
	// ReasonDeadline: the job cannot end by its --deadline (Slurm's DeadLine).
	ReasonDeadline Reason = "DeadLine"
	// ReasonJobArrayTaskLimit: an array's %N throttle is reached.
	ReasonJobArrayTaskLimit Reason = "JobArrayTaskLimit"
)

// DescNodesDown is the detail of a job waiting on Resources because fewer
// nodes of its partition are up than it needs: Slurm 22.05's state_desc
// then, which squeue's %r and %R and scontrol's Reason print in place of
// "Resources" (the anchor's squeue shows it for a 4-node job with two of
// four nodes drained).
const DescNodesDown = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"

// FilterReason says why one node cannot take one job: the name of the
// filter in the selection chain that rejected it.
type FilterReason string

// Node filter reasons, static (the node can never take the job as asked)
// then dynamic (not now).
const (
	FilterOK             FilterReason = ""
	FilterPartition      FilterReason = "not in the job's partition"
	FilterNodeDown       FilterReason = "node down"
	FilterNodeDrained    FilterReason = "node drained"
	FilterNodeList       FilterReason = "not in the requested node list"
	FilterExcluded       FilterReason = "excluded by the request"
	FilterReservation    FilterReason = "outside the job's reservation"
	FilterReserved       FilterReason = "in an admin reservation"
	FilterFeatures       FilterReason = "missing required features"
	FilterDeviceType     FilterReason = "too few devices of the requested type"
	FilterTooSmall       FilterReason = "too few CPUs or too little memory in total"
	FilterNotIdle        FilterReason = "not idle (exclusive job)"
	FilterBusyDevices    FilterReason = "not enough free devices"
	FilterBusyCPUs       FilterReason = "not enough free CPUs"
	FilterBusyMemory     FilterReason = "not enough free memory"
	FilterHeldForHigher  FilterReason = "held for a higher-priority job's reservation"
	FilterAdminNotYetEnd FilterReason = "admin reservation starts before the job would end"
)

// Scorer names the tie-breakers among fitting nodes, in the order they weigh.
type Scorer string

// Scorers of the selection chain.
const (
	ScoreIslands  Scorer = "fewest fast-link islands, CPUs local to the devices"
	ScoreSwitches Scorer = "fewest leaf switches"
	ScoreBestFit  Scorer = "best fit (fewest devices left free)"
)

// Action is what a pass decided for a job.
type Action uint8

// Actions.
const (
	ActionPending Action = iota // stays pending with a reason
	ActionStart                 // starts now (Plan.Starts has its allocation)
	ActionReserve               // blocked; resources reserved at its expected start
)

// String names the action as the decision log prints it.
func (a Action) String() string {
	switch a {
	case ActionStart:
		return "start"
	case ActionReserve:
		return "reserve"
	}
	return "pending"
}
