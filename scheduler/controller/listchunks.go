package controller

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// defaultListChunkBytes bounds one message of a streamed listing (squeue,
// sinfo, sacct, sprio, events): a quarter of gRPC's default 4 MiB receive
// bound, so a client of any version reads a listing of any length.
const defaultListChunkBytes = 1 << 20

func (c *Controller) listChunkBytes() int {
	if n := c.opts.Limits.ListChunkBytes; n > 0 {
		return n
	}
	return defaultListChunkBytes
}

// sendChunks sends items in order, in messages whose repeated field holds
// at most limit bytes (an item larger than limit goes alone). It sends at
// least one message, so an empty listing still answers: an older client
// calling the method as unary reads it as before.
func sendChunks[T proto.Message](items []T, limit int, send func([]T) error) error {
	start, size := 0, 0
	for i, it := range items {
		// The item's bytes, its length prefix and the field's tag.
		n := 1 + protowire.SizeBytes(proto.Size(it))
		if i > start && size+n > limit {
			if err := send(items[start:i]); err != nil {
				return err
			}
			start, size = i, 0
		}
		size += n
	}
	return send(items[start:])
}
