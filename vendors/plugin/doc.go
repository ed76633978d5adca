// Package plugin carries the vendors.Driver contract to out-of-tree vendor
// adapters over gRPC on a unix socket: Serve exposes any vendors.Driver on a
// socket (for adapter authors), Dial returns a vendors.Driver backed by one
// (for the node agent), whose optional capabilities are exactly those the
// adapter implements. The protocol is versioned (pluginv1, negotiated by a
// handshake) and errors keep their meaning across the wire
// (vendors.ErrNotApplicable, gres.ErrUnknownDevice). It imports vendors, gres
// and topology only — never the scheduler, labs or another vendor package.
package plugin
