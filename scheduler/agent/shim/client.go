package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Client is the agent's connection to its node's supervisor.
type Client struct {
	conn    net.Conn
	pid     int
	onEnded func(jobID string)
	lost    chan struct{} // closed once the connection is gone

	wmu sync.Mutex // one request on the wire at a time

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan message
	closing bool
	err     error // why the connection ended
}

// ErrLost says the supervisor went away (or the client was closed).
var ErrLost = errors.New("shim: supervisor connection lost")

// Connect returns a client of the supervisor listening on sock, starting
// one when none answers: start is its command line ("serve" is appended),
// logPath receives its output. onEnded is called, on a goroutine of its
// own, with the id of every job whose status file has become final.
func Connect(sock string, start []string, logPath string, onEnded func(jobID string)) (*Client, error) {
	if conn, err := dialUnix(sock); err == nil {
		// A supervisor leaving because it was idle closes what it had
		// not yet accepted; then a new one is started.
		if c, err := greet(conn, onEnded); err == nil {
			return c, nil
		}
	}
	conn, err := spawn(sock, start, logPath)
	if err != nil {
		return nil, err
	}
	c, err := greet(conn, onEnded)
	if err != nil {
		return nil, fmt.Errorf("shim: new supervisor at %s: %w", sock, err)
	}
	return c, nil
}

// greet reads the supervisor's hello and starts the client's reader.
func greet(conn net.Conn, onEnded func(string)) (*Client, error) {
	c := &Client{conn: conn, onEnded: onEnded, lost: make(chan struct{}), pending: map[uint64]chan message{}}
	rd := bufio.NewReader(conn)
	var hello message
	line, err := rd.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	if err == nil && hello.Event != eventHello {
		err = fmt.Errorf("first message %q is no hello", line)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("no greeting: %w", err)
	}
	c.pid = hello.Pid
	go c.read(rd)
	return c, nil
}

// spawn starts a supervisor on a fresh socket at sock. The listening
// socket is made here and handed over as descriptor 3, so it accepts from
// the moment it exists and a connect cannot race the supervisor's start.
func spawn(sock string, start []string, logPath string) (net.Conn, error) {
	if len(start) == 0 {
		return nil, fmt.Errorf("shim: no supervisor command")
	}
	os.Remove(sock) // a dead supervisor's
	ln, err := listenUnix(sock)
	if err != nil {
		return nil, fmt.Errorf("shim: listen on %s: %w", sock, err)
	}
	ln.SetUnlinkOnClose(false)
	lf, err := ln.File()
	ln.Close()
	if err != nil {
		return nil, fmt.Errorf("shim: listener of %s: %w", sock, err)
	}
	defer lf.Close()
	rotateLog(logPath, maxLogBytes)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shim: supervisor log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(start[0], append(append([]string(nil), start[1:]...), "serve")...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Dir = "/"
	// Its own session: the agent's terminal, process group and death do
	// not reach the supervisor, which must outlive an agent restart.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Only the files named above: what the agent inherited without
	// close-on-exec stays out of a supervisor that may live for months.
	err = SealDescriptors()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("shim: start supervisor %s: %w", start[0], err)
	}
	go cmd.Wait() // reaped here while this agent lives; by init after
	conn, err := dialUnix(sock)
	if err != nil {
		return nil, fmt.Errorf("shim: connect to the new supervisor: %w", err)
	}
	return conn, nil
}

// maxLogBytes is the size past which a new supervisor starts a fresh log.
const maxLogBytes = 16 << 20

// rotateLog moves a log of max bytes or more to path.1 (replacing the one
// there): the supervisor writes only failures, but it may live for months
// on a busy node, and each new one starts with room.
func rotateLog(path string, max int64) {
	if fi, err := os.Stat(path); err == nil && fi.Size() >= max {
		os.Rename(path, path+".1")
	}
}

// Pid is the supervisor's process id.
func (c *Client) Pid() int { return c.pid }

// Lost is closed once the connection has ended; Err then says why.
func (c *Client) Lost() <-chan struct{} { return c.lost }

// Err is why the connection ended (nil while it is up or after Close).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection; the supervisor keeps its jobs running for
// the next agent.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	err := c.conn.Close()
	<-c.lost
	return err
}

// Start has the supervisor start the job cfg describes. pid is its
// leader; a job that could not be started gives startErr (its status file
// and an ended event follow), a failed or refused request (an incomplete
// cfg) err.
func (c *Client) Start(ctx context.Context, cfg Config) (pid int, startErr string, err error) {
	m, err := c.call(ctx, request{Op: opStart, Config: &cfg})
	if err != nil {
		return 0, "", err
	}
	return m.Pid, m.StartError, nil
}

// Running lists the jobs the supervisor runs now.
func (c *Client) Running(ctx context.Context) ([]RunningJob, error) {
	m, err := c.call(ctx, request{Op: opList})
	return m.Jobs, err
}

func (c *Client) call(ctx context.Context, req request) (message, error) {
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.err != nil || c.closing {
		c.mu.Unlock()
		return message{}, ErrLost
	}
	c.next++
	req.ID = c.next
	c.pending[req.ID] = ch
	c.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return message{}, fmt.Errorf("shim: encode %s request: %w", req.Op, err)
	}
	c.wmu.Lock()
	_, err = c.conn.Write(append(b, '\n'))
	c.wmu.Unlock()
	if err != nil {
		c.drop(req.ID)
		return message{}, fmt.Errorf("%w: %w", ErrLost, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return message{}, ErrLost
		}
		if m.Error != "" {
			return m, fmt.Errorf("shim: supervisor refused %s: %s", req.Op, m.Error)
		}
		return m, nil
	case <-ctx.Done():
		c.drop(req.ID)
		return message{}, ctx.Err()
	}
}

func (c *Client) drop(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// read dispatches responses and events until the connection ends.
func (c *Client) read(rd *bufio.Reader) {
	var err error
	for {
		var line []byte
		if line, err = rd.ReadBytes('\n'); err != nil {
			break
		}
		var m message
		if err = json.Unmarshal(line, &m); err != nil {
			err = fmt.Errorf("shim: bad message from supervisor: %w", err)
			break
		}
		if m.ID == 0 {
			if m.Event == eventEnded && c.onEnded != nil {
				go c.onEnded(m.Job)
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	c.conn.Close()
	c.mu.Lock()
	if !c.closing {
		c.err = fmt.Errorf("%w: %w", ErrLost, err)
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.lost)
}

// Unix socket paths are limited to 107 bytes; a deep spool is reached
// through a descriptor of its directory instead (/proc/self/fd/N/NAME).
const maxSockPath = 100

func dialUnix(sock string) (net.Conn, error) {
	var conn net.Conn
	err := viaShortPath(sock, func(p string) error {
		var err error
		conn, err = net.Dial("unix", p)
		return err
	})
	return conn, err
}

func listenUnix(sock string) (*net.UnixListener, error) {
	var ln *net.UnixListener
	err := viaShortPath(sock, func(p string) error {
		var err error
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		if err == nil {
			err = os.Chmod(sock, 0o600)
		}
		return err
	})
	return ln, err
}

func viaShortPath(sock string, fn func(string) error) error {
	if len(sock) <= maxSockPath {
		return fn(sock)
	}
	fd, err := unix.Open(filepath.Dir(sock), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fn("/proc/self/fd/" + strconv.Itoa(fd) + "/" + filepath.Base(sock))
}
