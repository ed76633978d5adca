// Package gres is Parity's vocabulary for generic resources: the
// vendor-neutral device model and host inventory that drivers report, the
// GRES request syntax users type (--gres, --gpus, --gpus-per-node,
// --gpus-per-task), device samples and health conditions, and per-node
// allocation bookkeeping. It imports only topology and the standard library;
// nothing here names a vendor.
package gres
