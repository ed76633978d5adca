// Package telemetry is the node agent's device telemetry: a loop that asks
// every vendor driver with a Sampler for samples on each tick and hands them
// to sinks (the job runtime attributes them to jobs for accounting), and a
// Prometheus collector that serves the latest samples under dcgm-exporter's
// metric names (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED, …) with
// vendor-neutral labels (gpu, UUID, vendor, model, job), for every vendor
// alike. A field a driver could not read is left out, never reported as
// zero. It imports gres, vendors (interfaces only) and the Prometheus client;
// it must not import the scheduler, the job runtime or any vendor package.
package telemetry
