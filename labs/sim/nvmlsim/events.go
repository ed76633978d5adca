package nvmlsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// eventQueue backs one NVML event set: the GPUs registered on it with
// their event masks, and the events raised since the last Wait.
type eventQueue struct {
	mu    sync.Mutex
	queue []nvml.EventData
	regs  map[int]uint64 // gpu index → registered event mask
	freed bool
	wake  chan struct{} // capacity 1: "something was queued"
}

// newEventSet serves EventSetCreate.
func (m *Machine) newEventSet() (nvml.EventSet, nvml.Return) {
	q := &eventQueue{regs: map[int]uint64{}, wake: make(chan struct{}, 1)}
	set := &mock.EventSet{}
	set.WaitFunc = q.wait
	set.FreeFunc = func() nvml.Return {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.sets, set)
		q.mu.Lock()
		defer q.mu.Unlock()
		q.freed = true
		return nvml.SUCCESS
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sets[set] = q
	return set, nvml.SUCCESS
}

// wireEvents answers the per-device event calls. Like NVML, registering
// a type the device does not support fails with ERROR_NOT_SUPPORTED.
func (m *Machine) wireEvents(g *gpuState) {
	d := g.dev
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
		return locked(m, g, func() (uint64, nvml.Return) { return supportedEvents, nvml.SUCCESS })
	}
	d.RegisterEventsFunc = func(mask uint64, set nvml.EventSet) nvml.Return {
		m.mu.Lock()
		defer m.mu.Unlock()
		q, ok := m.sets[set]
		switch {
		case g.lost:
			return nvml.ERROR_GPU_IS_LOST
		case !ok:
			return nvml.ERROR_INVALID_ARGUMENT
		case mask&^uint64(supportedEvents) != 0:
			return nvml.ERROR_NOT_SUPPORTED
		}
		q.mu.Lock()
		q.regs[g.index] |= mask
		q.mu.Unlock()
		close(m.registered) // wake WaitRegistered callers
		m.registered = make(chan struct{})
		return nvml.SUCCESS
	}
}

// WaitRegistered blocks until some event set has GPU gpu registered for
// every type in mask, or ctx ends. Fault scripts use it to inject only
// once a health watcher listens (events raised earlier are lost, as on
// real hardware).
func (m *Machine) WaitRegistered(ctx context.Context, gpu int, mask uint64) error {
	if gpu < 0 || gpu >= len(m.gpus) {
		return fmt.Errorf("nvmlsim: gpu %d is outside 0..%d", gpu, len(m.gpus)-1)
	}
	for {
		m.mu.Lock()
		wake := m.registered
		found := false
		for _, q := range m.sets {
			q.mu.Lock()
			found = found || q.regs[gpu]&mask == mask
			q.mu.Unlock()
		}
		m.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nvmlsim: gpu %d not registered for events %#x: %w", gpu, mask, ctx.Err())
		case <-wake:
		}
	}
}

// emit queues an event on every set registered for it; m.mu is held.
func (m *Machine) emit(g *gpuState, eventType, data uint64) {
	m.emitOn(g, eventType, data, nvml.GPU_INSTANCE_ID_ANY, nvml.COMPUTE_INSTANCE_ID_ANY)
}

// emitOn is emit with explicit MIG instance ids; m.mu is held.
func (m *Machine) emitOn(g *gpuState, eventType, data uint64, gi, ci uint32) {
	ev := nvml.EventData{Device: g.dev, EventType: eventType, EventData: data, GpuInstanceId: gi, ComputeInstanceId: ci}
	for _, q := range m.sets {
		q.push(g.index, ev)
	}
}

func (q *eventQueue) push(gpu int, ev nvml.EventData) {
	q.mu.Lock()
	registered := q.regs[gpu]&ev.EventType != 0 && !q.freed
	if registered {
		q.queue = append(q.queue, ev)
	}
	q.mu.Unlock()
	if registered {
		select {
		case q.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// wait serves EventSet.Wait: the oldest queued event, or ERROR_TIMEOUT
// once timeoutMs passed without one. It blocks without holding m.mu.
func (q *eventQueue) wait(timeoutMs uint32) (nvml.EventData, nvml.Return) {
	timer := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
	defer timer.Stop()
	for {
		q.mu.Lock()
		switch {
		case q.freed:
			q.mu.Unlock()
			return nvml.EventData{}, nvml.ERROR_UNINITIALIZED
		case len(q.queue) > 0:
			ev := q.queue[0]
			q.queue = q.queue[1:]
			q.mu.Unlock()
			return ev, nvml.SUCCESS
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-timer.C:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
	}
}
