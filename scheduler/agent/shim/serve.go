package shim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// firstContact bounds how long a new supervisor waits for its agent.
const firstContact = time.Minute

// server is a node's supervisor: one process for all of the node's jobs.
type server struct {
	ln       net.Listener
	devNull  int         // /dev/null, read-write: stage 2's stdin
	jobsNull int         // devNull, or -1 if jobs may not share it (sharedNull)
	starts   chan launch // to the launcher thread

	mu    sync.Mutex
	peer  *peer            // the connected agent, if any
	jobs  map[string]*sjob // started or starting, until their end is recorded
	byPid map[int]*sjob
	met   bool // an agent has connected
	idle  chan struct{}
	quit  bool
}

// sjob is one job under the supervisor.
type sjob struct {
	cfg Config
	st  Status
}

// peer is one agent connection.
type peer struct {
	conn net.Conn
	mu   sync.Mutex // writes
}

func (p *peer) send(m message) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conn.Write(append(b, '\n')) // a gone agent learns the outcome from the status files
}

// serve runs the supervisor on ln until it is idle: no agent connected
// and no job left whose end is not recorded.
func serve(ln net.Listener) error {
	// Read-write: jobs get it as stdin and as an output.
	devNull, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: os.DevNull, Err: err}
	}
	defer unix.Close(devNull)
	s := &server{ln: ln, devNull: devNull, jobsNull: sharedNull(devNull), starts: make(chan launch), jobs: map[string]*sjob{},
		byPid: map[int]*sjob{}, idle: make(chan struct{})}
	go s.launcher()
	go s.accept()
	t := time.AfterFunc(firstContact, func() { s.maybeIdle(true) })
	<-s.idle
	t.Stop()
	ln.Close()
	return nil
}

func (s *server) accept() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		p := &peer{conn: conn}
		s.mu.Lock()
		if s.quit {
			s.mu.Unlock()
			conn.Close()
			return
		}
		old := s.peer
		s.peer, s.met = p, true
		s.mu.Unlock()
		if old != nil {
			old.conn.Close() // a restarted agent replaces its predecessor
		}
		p.send(message{Event: eventHello, Pid: os.Getpid()})
		go s.handle(p)
	}
}

// handle serves one agent's requests until it disconnects.
func (s *server) handle(p *peer) {
	sc := bufio.NewScanner(p.conn)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // a job's environment can be large
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.ID == 0 {
			p.send(message{ID: req.ID, Error: fmt.Sprintf("malformed request: %v", err)})
			continue
		}
		switch req.Op {
		case opStart:
			if req.Config == nil {
				p.send(message{ID: req.ID, Error: "start without a config"})
				continue
			}
			go s.start(p, req.ID, *req.Config)
		case opList:
			p.send(message{ID: req.ID, Jobs: s.running()})
		default:
			p.send(message{ID: req.ID, Error: fmt.Sprintf("unknown op %q", req.Op)})
		}
	}
	p.conn.Close()
	s.mu.Lock()
	if s.peer == p {
		s.peer = nil
	}
	s.mu.Unlock()
	s.maybeIdle(false)
}

func (s *server) running() []RunningJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RunningJob, 0, len(s.jobs))
	// Listed until the status is written and the leftovers swept: a job
	// missing here must have its status file.
	for _, j := range s.jobs {
		if j.st.Pid > 0 {
			out = append(out, RunningJob{JobID: j.cfg.JobID, Pid: j.st.Pid})
		}
	}
	return out
}

// start starts one job and answers the agent; a job that cannot start
// gets a status saying why and an ended event, as one that ran would.
func (s *server) start(p *peer, id uint64, cfg Config) {
	if err := cfg.validate(); err != nil {
		p.send(message{ID: id, Error: err.Error()})
		return
	}
	j := &sjob{cfg: cfg, st: Status{ShimPid: os.Getpid()}}
	s.mu.Lock()
	if _, dup := s.jobs[cfg.JobID]; dup {
		s.mu.Unlock()
		p.send(message{ID: id, Error: fmt.Sprintf("job %s is already running here", cfg.JobID)})
		return
	}
	s.jobs[cfg.JobID] = j
	s.mu.Unlock()
	res := s.launch(j)
	if res.err != nil {
		fmt.Fprintf(os.Stderr, "shim: job %s: %v\n", cfg.JobID, res.err)
		s.mu.Lock()
		j.st.StartError = res.err.Error()
		s.mu.Unlock()
		p.send(message{ID: id, StartError: res.err.Error()})
		s.ended(j)
		return
	}
	p.send(message{ID: id, Pid: res.pid, Start: res.how})
}

// exited is told by the launcher thread of every child it reaps; a job's
// leader has its end recorded (elsewhere: the launcher must not block).
func (s *server) exited(pid int, ws syscall.WaitStatus) {
	s.mu.Lock()
	j := s.byPid[pid]
	delete(s.byPid, pid)
	if j != nil {
		j.st.recordWait(ws)
	}
	s.mu.Unlock()
	if j != nil { // else an orphan the job left, reparented here
		go s.ended(j)
	}
}

// ended records a job's end, kills what it left behind and tells the
// agent.
func (s *server) ended(j *sjob) {
	s.mu.Lock()
	j.st.Done, j.st.Ended = true, time.Now()
	st := j.st
	s.mu.Unlock()
	if err := writeStatus(j.cfg.StatusFile, st); err != nil {
		fmt.Fprintf(os.Stderr, "shim: job %s: %v\n", j.cfg.JobID, err)
	}
	// Leftovers die even when the status could not be written; the
	// launcher thread reaps them as they go.
	sweep(j.cfg.ProcsFiles, st.Pid)
	s.mu.Lock()
	delete(s.jobs, j.cfg.JobID)
	p := s.peer
	s.mu.Unlock()
	if p != nil {
		p.send(message{Event: eventEnded, Job: j.cfg.JobID})
	}
	s.maybeIdle(false)
}

// maybeIdle ends the supervisor once nothing needs it: no agent and no
// job. Before the first agent has come, only the first-contact timer
// (timeout set) may end it.
func (s *server) maybeIdle(timeout bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quit || s.peer != nil || len(s.jobs) > 0 || (!s.met && !timeout) {
		return
	}
	s.quit = true
	s.ln.Close() // a late agent is refused and starts a supervisor of its own
	close(s.idle)
}
