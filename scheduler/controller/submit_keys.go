package controller

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/core"
)

// Idempotent submission: a client sends a random key with each submission
// and sends the same key again when it retries (its answer was lost, the
// leader changed). The key is kept on the job's record, so a new leader
// knows it too, and the writer answers a known key by its job instead of
// queueing a second one. Keys live as long as their jobs.

// maxSubmitKey bounds a key's length (a UUID is 36).
const maxSubmitKey = 128

func checkSubmitKey(k string) error {
	if len(k) > maxSubmitKey {
		return status.Errorf(codes.InvalidArgument, "submit: idempotency_key of %d bytes (at most %d)", len(k), maxSubmitKey)
	}
	return nil
}

// submittedAs is the job a key already created, if it is still known.
func (st *state) submittedAs(key string) (core.JobID, bool) {
	if key == "" {
		return 0, false
	}
	id, ok := st.keys[key]
	if ok && st.jobs[id] == nil {
		delete(st.keys, key)
		return 0, false
	}
	return id, ok
}

func (st *state) rememberKey(key string, id core.JobID) {
	if key != "" {
		st.keys[key] = id
	}
}

// forgetKey drops a forgotten job's key.
func (st *state) forgetKey(j *job) {
	if j.submitKey != "" && st.keys[j.submitKey] == j.Core.ID {
		delete(st.keys, j.submitKey)
	}
}

// indexKeys rebuilds the keys from the loaded jobs: the lowest id holding
// a key is the job its submission created (array tasks split off later
// carry the array's record, key included).
func (st *state) indexKeys() {
	for id, j := range st.jobs {
		if j.submitKey == "" {
			continue
		}
		if have, ok := st.keys[j.submitKey]; !ok || id < have {
			st.keys[j.submitKey] = id
		}
	}
}
