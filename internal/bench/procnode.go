package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procNode is a server process on this machine, found by the loopback
// port it listens on (Linux: /proc). Killing it keeps what starting it
// again needs: its command line, environment, working directory and the
// file its output went to, so that any server started from a script (as
// scripts/services/weaviate-cluster.sh starts Weaviate's nodes) can be
// killed with SIGKILL and restarted as it was.
type procNode struct {
	URL  string // the base URL it serves
	Port int
}

// procStart is how a process was started.
type procStart struct {
	args, env []string
	dir, out  string // out: the file stdout and stderr went to ("" for none)
}

// getenv is the value of a variable of the process's environment.
func (st procStart) getenv(name string) string {
	for _, kv := range st.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func newProcNode(base string) (procNode, error) {
	u, err := url.Parse(base)
	if err != nil {
		return procNode{}, fmt.Errorf("node %q: %w", base, err)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return procNode{}, fmt.Errorf("node %s is not on this machine (loopback): the failover benchmark kills and restarts local nodes only", base)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return procNode{}, fmt.Errorf("node %s: no port", base)
	}
	return procNode{URL: base, Port: port}, nil
}

// pid is the process listening on the node's port.
func (n procNode) pid() (int, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningInodes(f, n.Port, inodes); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on port %d of %s", n.Port, n.URL)
	}
	procs, err := filepath.Glob("/proc/[0-9]*/fd/*")
	if err != nil {
		return 0, err
	}
	for _, fd := range procs {
		l, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(l, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, fmt.Errorf("port %d of %s: no process of this user holds its socket", n.Port, n.URL)
}

// listeningInodes adds the socket inodes listening on port in a
// /proc/net/tcp* file.
func listeningInodes(file string, port int, out map[string]bool) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
			out[f[9]] = true
		}
	}
	return sc.Err()
}

// kill sends SIGKILL to the node's process and returns how to start it
// again.
func (n procNode) kill() (procStart, error) {
	pid, err := n.pid()
	if err != nil {
		return procStart{}, err
	}
	st, err := readStart(pid)
	if err != nil {
		return procStart{}, fmt.Errorf("node %s (pid %d): %w", n.URL, pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return procStart{}, fmt.Errorf("kill -9 %d (%s): %w", pid, n.URL, err)
	}
	for i := 0; i < 200; i++ { // until the port is free (at most 10 s)
		if _, err := n.pid(); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return st, nil
}

func readStart(pid int) (procStart, error) {
	dir := fmt.Sprintf("/proc/%d", pid)
	cmd, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return procStart{}, err
	}
	env, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return procStart{}, err
	}
	cwd, err := os.Readlink(dir + "/cwd")
	if err != nil {
		return procStart{}, err
	}
	st := procStart{args: splitNul(cmd), env: splitNul(env), dir: cwd}
	if out, err := os.Readlink(dir + "/fd/1"); err == nil && filepath.IsAbs(out) {
		if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
			st.out = out
		}
	}
	if len(st.args) == 0 {
		return procStart{}, errors.New("empty command line")
	}
	return st, nil
}

func splitNul(b []byte) []string {
	var out []string
	for _, s := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		out = append(out, string(s))
	}
	return out
}

// start runs the process again, in a session of its own (it outlives the
// benchmark), its output appended to the file it wrote before. When its
// environment names a pid file (DMAR_PIDFILE, which the service scripts
// set), the new pid is written there, so that the script still stops it.
func (st procStart) start() (int, error) {
	c := exec.Command(st.args[0], st.args[1:]...)
	c.Env, c.Dir = st.env, st.dir
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if st.out != "" {
		f, err := os.OpenFile(st.out, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		c.Stdout, c.Stderr = f, f
	}
	if err := c.Start(); err != nil {
		return 0, fmt.Errorf("restart %s: %w", st.args[0], err)
	}
	pid := c.Process.Pid
	go c.Wait() //nolint:errcheck // reaps it should it exit while the benchmark runs
	if f := st.getenv("DMAR_PIDFILE"); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			return pid, fmt.Errorf("restarted as pid %d, but its pid file: %w", pid, err)
		}
	}
	return pid, nil
}
