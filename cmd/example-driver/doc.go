// Command example-driver is an out-of-tree vendor adapter: it serves a
// simulated accelerator, "ExampleGPU" (its own device nodes under a root
// with a made-up major, its own EXAMPLE_VISIBLE_DEVICES variable, its own
// fault codes), to Parity's node agent over vendors/plugin. It imports only
// public packages of this module (gres, topology, vendors, vendors/plugin),
// proving that a vendor needs nothing private to plug in; `parity conform
// driver --plugin unix:///path.sock` certifies it.
package main
