package bench

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// When the test binary runs with DMAR_TEST_LISTEN set, it is a stand-in
// server: it listens on that address and answers with its environment's
// DMAR_TEST_TAG, until killed.
func TestMain(m *testing.M) {
	if addr := os.Getenv("DMAR_TEST_LISTEN"); addr != "" {
		fmt.Println("stand-in server up")
		tag := os.Getenv("DMAR_TEST_TAG")
		_ = http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, tag) }))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// A local server is found by its port, killed with SIGKILL, and started
// again with the same command line, environment, directory and output
// file; its pid file follows.
func TestProcNodeKillRestart(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp (not Linux)")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logf, pidf := filepath.Join(dir, "out.log"), filepath.Join(dir, "node.pid")
	out, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "DMAR_TEST_LISTEN="+addr, "DMAR_TEST_TAG=node-a", "DMAR_PIDFILE="+pidf)
	c.Dir, c.Stdout, c.Stderr = dir, out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	// The node is killed at the end; its exit status says nothing then.
	defer func() { _ = c.Process.Kill() }()
	go func() { _ = c.Wait() }()
	base := "http://" + addr
	waitBody(t, base, "node-a")

	n, err := newProcNode(base)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := n.pid(); err != nil || pid != c.Process.Pid {
		t.Fatalf("pid of %s = %d, %v; want %d", base, pid, err, c.Process.Pid)
	}
	st, err := n.kill()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base); err == nil {
		t.Fatal("the node still answers after kill -9")
	}
	if st.getenv("DMAR_TEST_TAG") != "node-a" || st.dir != dir || st.out != logf {
		t.Errorf("kept start: tag %q dir %q out %q", st.getenv("DMAR_TEST_TAG"), st.dir, st.out)
	}
	pid, err := st.start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill() // gone already is fine
		}
	}()
	waitBody(t, base, "node-a")
	if b, _ := os.ReadFile(pidf); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("pid file holds %q, want the new pid %d", b, pid)
	}
	if b, _ := os.ReadFile(logf); strings.Count(string(b), "stand-in server up") != 2 {
		t.Errorf("the restarted server's output did not go to its file: %q", b)
	}
	if _, err := newProcNode("http://10.1.2.3:8080"); err == nil {
		t.Error("a node that is not on loopback was accepted")
	}
}

func waitBody(t *testing.T, base, want string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if r, err := http.Get(base); err == nil {
			b := make([]byte, 64)
			k, _ := r.Body.Read(b)
			r.Body.Close()
			if string(b[:k]) == want {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s never answered %q", base, want)
}

func TestCaughtUp(t *testing.T) {
	c := map[string]int64{"wv-0": 10, "wv-1": 12, "wv-2": 12}
	if caughtUp(c, "wv-0") || !caughtUp(c, "wv-1") || caughtUp(c, "wv-9") {
		t.Errorf("caughtUp(%v) wrong", c)
	}
}
