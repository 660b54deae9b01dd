package wikidata

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
)

// input is an opened dump: the decompressed stream plus how far into the
// file (compressed bytes) the reader has got, for the ETA.
type input struct {
	r        io.Reader
	kind     string // "json", "gzip", "bzip2"
	size     int64  // file size in bytes
	consumed *atomic.Int64
	close    func() error
	// wait, for an external decompressor, waits for it after the stream has
	// ended: truncated when it reported a cut-off input, err on any other
	// failure. Nil for Go's readers, which report both as read errors.
	wait func() (truncated bool, err error)
}

// countingReader counts the bytes read from the file itself.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// detect names the compression of a dump from its first bytes, falling back
// on the file name's extension when the file is too short to tell.
func detect(head []byte, name string) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip"
	case len(head) >= 3 && string(head[:3]) == "BZh":
		return "bzip2"
	case len(head) >= 1:
		return "json"
	case strings.HasSuffix(name, ".gz"):
		return "gzip"
	case strings.HasSuffix(name, ".bz2"):
		return "bzip2"
	}
	return "json"
}

// external decompressors, fastest first; used only when asked for.
var externalTools = map[string][][]string{
	"gzip":  {{"pigz", "-dc"}, {"gzip", "-dc"}},
	"bzip2": {{"lbzip2", "-dc"}, {"pbzip2", "-dc"}, {"bzip2", "-dc"}},
}

// openDump opens path. Unless mode is "go", gzip and bzip2 streams are piped
// through a decompressor found on PATH (pigz, lbzip2, …) that runs in its own
// process; "external" fails when there is none, "auto" falls back on Go's.
func openDump(path string, mode string) (*input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dump: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat dump: %w", err)
	}
	in := &input{size: st.Size(), consumed: new(atomic.Int64)}
	br := bufio.NewReaderSize(countingReader{f, in.consumed}, 1<<20)
	head, _ := br.Peek(3)
	in.kind = detect(head, path)
	in.close = f.Close
	if mode != "go" && in.kind != "json" {
		for _, tool := range externalTools[in.kind] {
			if _, err := exec.LookPath(tool[0]); err != nil {
				continue
			}
			cmd := exec.Command(tool[0], tool[1:]...)
			cmd.Stdin = br
			out, err := cmd.StdoutPipe()
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("decompress with %s: %w", tool[0], err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				f.Close()
				return nil, fmt.Errorf("decompress with %s: %w", tool[0], err)
			}
			in.r = out
			var once sync.Once
			var werr error
			wait := func() error {
				once.Do(func() { werr = cmd.Wait() })
				return werr
			}
			in.wait = func() (bool, error) {
				err := wait()
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					return false, err
				}
				msg := strings.TrimSpace(stderr.String())
				if strings.Contains(msg, "unexpected end") || strings.Contains(msg, "ends unexpectedly") {
					return true, nil
				}
				return false, fmt.Errorf("%s: %v: %s", tool[0], err, msg)
			}
			in.close = func() error {
				_ = cmd.Process.Kill() // harmless after a normal exit; stops it on an early return
				wait()
				return f.Close()
			}
			return in, nil
		}
		if mode == "external" {
			f.Close()
			return nil, fmt.Errorf("no external %s decompressor on PATH", in.kind)
		}
	}
	switch in.kind {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open gzip dump %s: %w", path, err)
		}
		in.r = zr
	case "bzip2":
		in.r = bzip2.NewReader(br)
	default:
		in.r = br
	}
	return in, nil
}
