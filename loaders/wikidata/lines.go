package wikidata

import (
	"bufio"
	"errors"
	"io"
)

// batch is a run of consecutive dump lines handed to one worker. Lines are
// copied into buf so the reader's buffer can move on.
type batch struct {
	seq   int
	end   int64 // offset just past the batch's last line
	buf   []byte
	lines []lineRef
	out   []result
}

type lineRef struct {
	start, end int
	off        int64 // byte offset of the line in the uncompressed dump
	last       bool  // the stream ended inside this line (no newline)
	tooLong    bool  // longer than the limit; its bytes were dropped
}

// result is what a worker made of one line.
type result struct {
	off     int64
	framing bool // "[", "]" or blank: not an entity, not counted
	ent     Entity
	err     error
	// opens and closes mark the results of a line that opens or closes the
	// dump's array; cut marks a last line cut off inside an entity.
	opens, closes, cut bool
}

// lineReader splits the decompressed dump into lines with their offsets,
// holding at most maxLine bytes of any one line.
type lineReader struct {
	r         *bufio.Reader
	off       int64
	maxLine   int
	truncated bool  // the compressed stream itself was cut off
	cutBy     error // the reader's error for the cut
}

func newLineReader(r io.Reader, maxLine int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 4<<20), maxLine: maxLine}
}

// next appends the next line (without its newline) to buf and describes it.
// It returns io.EOF when no line is left.
func (lr *lineReader) next(buf []byte) ([]byte, lineRef, error) {
	ref := lineRef{start: len(buf), off: lr.off}
	n := 0
	for {
		chunk, err := lr.r.ReadSlice('\n')
		n += len(chunk)
		lr.off += int64(len(chunk))
		body := chunk
		if len(body) > 0 && body[len(body)-1] == '\n' {
			body = body[:len(body)-1]
		}
		if !ref.tooLong {
			if n > lr.maxLine {
				ref.tooLong = true
				buf = buf[:ref.start]
			} else {
				buf = append(buf, body...)
			}
		}
		switch {
		case err == nil:
			ref.end = len(buf)
			return buf, ref, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			if errors.Is(err, io.ErrUnexpectedEOF) {
				lr.truncated, lr.cutBy = true, err
			}
			if n == 0 {
				return buf, ref, io.EOF
			}
			ref.end = len(buf)
			ref.last = true
			return buf, ref, nil
		default:
			return buf, ref, err
		}
	}
}
