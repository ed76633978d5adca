// Package cpu is the device-less vendor driver that reports a host's CPUs,
// cores, sockets, memory and NUMA domains (gres.Host) through
// github.com/jaypipes/ghw, optionally over a chroot so labs can point it at a
// generated tree. It owns no devices and prepares nothing. It imports
// vendors, gres and topology and must not import the scheduler or labs.
package cpu
