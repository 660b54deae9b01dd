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
	// complaint is what the external decompressor said about a cut-off input.
	complaint string
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
func openDump(path, mode string) (*input, error) {
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
			if err := in.pipeThrough(tool, f, br); err != nil {
				f.Close()
				return nil, err
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
		zr.Multistream(false)
		in.r = &gzipMembers{zr: zr, br: br, in: in}
	case "bzip2":
		src := &eofReader{r: br}
		in.r = &bzip2Reader{r: bzip2.NewReader(src), src: src}
	default:
		in.r = br
	}
	return in, nil
}

// pipeThrough starts tool (a command line) on br, the file f's bytes, and
// makes its output in's stream; closing in stops it and closes f.
func (in *input) pipeThrough(tool []string, f *os.File, br *bufio.Reader) error {
	cmd := exec.Command(tool[0], tool[1:]...)
	cmd.Stdin = br
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("decompress with %s: %w", tool[0], err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("decompress with %s: %w", tool[0], err)
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
		return in.judgeExit(tool[0], err, strings.TrimSpace(stderr.String()))
	}
	in.close = func() error {
		_ = cmd.Process.Kill() // harmless after a normal exit; stops it on an early return
		_ = wait()             // killed above: its exit status says nothing
		return f.Close()
	}
	return nil
}

// judgeExit reads an external decompressor's exit (err from Wait, msg its
// stderr): truncated for a cut-off input, whose complaint it keeps in
// in.complaint; an error for any other failure.
func (in *input) judgeExit(tool string, err error, msg string) (truncated bool, _ error) {
	if err == nil {
		// bzip2 warns about trailing garbage and exits 0 (pigz calls it
		// trailing junk).
		if strings.Contains(msg, "trailing garbage") || strings.Contains(msg, "trailing junk") {
			return false, fmt.Errorf("%s: %s", tool, msg)
		}
		return false, nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false, err
	}
	if strings.Contains(msg, "unexpected end") || strings.Contains(msg, "ends unexpectedly") {
		in.complaint = strings.Join(strings.Fields(firstLine(msg)), " ")
		if !strings.HasPrefix(in.complaint, tool+":") {
			in.complaint = tool + ": " + in.complaint
		}
		return true, nil
	}
	return false, fmt.Errorf("%s: %v: %s", tool, err, msg)
}

// gzipMembers reads a gzip file member after member (pigz and bgzip write
// several; so does cat a.gz b.gz), like gzip.Reader's multistream mode,
// except that bytes after a member that do not start another one are an
// error rather than a header to wait for: gzip.Reader reports short garbage
// as io.ErrUnexpectedEOF, which is what a cut-off file gives.
type gzipMembers struct {
	zr *gzip.Reader
	br *bufio.Reader
	in *input
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
		next, _ := g.br.Peek(2)
		switch {
		case len(next) == 0:
			return 0, io.EOF
		case next[0] != 0x1f || len(next) == 2 && next[1] != 0x8b:
			at := g.in.consumed.Load() - int64(g.br.Buffered())
			return 0, fmt.Errorf("trailing garbage after the gzip stream at byte %d of the file", at)
		}
		if err := g.zr.Reset(g.br); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		g.zr.Multistream(false)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// eofReader notes when its reader has returned io.EOF.
type eofReader struct {
	r   *bufio.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.eof = e.eof || err == io.EOF
	return n, err
}

func (e *eofReader) ReadByte() (byte, error) {
	c, err := e.r.ReadByte()
	e.eof = e.eof || err == io.EOF
	return c, err
}

// bzip2Reader is Go's bzip2 reader, whose complaint about a cut-off file
// depends on where the cut falls (an unexpected EOF, or a block checksum
// mismatch when it decodes the missing bits as zeros): any error once the
// decoder has asked for bytes past the end of the file is a cut-off
// (io.ErrUnexpectedEOF); errors before that are corruption.
type bzip2Reader struct {
	r   io.Reader
	src *eofReader
}

func (b *bzip2Reader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.src.eof && !errors.Is(err, io.ErrUnexpectedEOF) {
		err = cutOff{err}
	}
	return n, err
}

// cutOff is a decompressor error caused by the end of the file.
type cutOff struct{ err error }

func (c cutOff) Error() string        { return c.err.Error() + " (at the end of the file)" }
func (c cutOff) Is(target error) bool { return target == io.ErrUnexpectedEOF }
