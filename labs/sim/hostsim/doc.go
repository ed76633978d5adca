// Package hostsim writes the Linux CPU, NUMA and memory files that
// github.com/jaypipes/ghw reads (/sys/devices/system/{cpu,node},
// /proc/{cpuinfo,meminfo}, the hostname) under a lab root, shaped by a
// sim.HostLayout, so the real vendors/cpu driver run over that root reports
// exactly the layout. It owns only those generated files; it imports
// labs/sim and topology and must not import vendors or the scheduler.
package hostsim
