package api

import "github.com/parityhpc/parity/scheduler/api/jsonapi"

// A follower among several controllers refuses every call but a status
// query with codes.Unavailable and names the leader: in the trailer under
// LeaderMetadataKey (gRPC) or in the LeaderHeader header (HTTP), so that a
// client holding the controllers' list goes straight to it.
const (
	LeaderMetadataKey = "parity-leader"
	LeaderHeader      = jsonapi.LeaderHeader
)
