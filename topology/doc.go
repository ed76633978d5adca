// Package topology is the leaf of Parity's dependency graph: CPU sets in Linux
// list syntax, NUMA domains, intra-node link graphs between accelerators
// (each link classed by what it is — same package, fabric, PCIe switch, host
// bridge, network — whatever its vendor calls it) and the pure scoring
// functions that choose the best-connected devices for a request. It imports
// only the standard library.
package topology
