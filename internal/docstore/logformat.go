package docstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// A log file (format 2) is a file header and records:
//
//	file header: "DMAR" "LOG" 0x02
//	record:      marker [4]byte | length uint32 | CRC-32C of the payload uint32 |
//	             CRC-32C of the 12 bytes before uint32 | payload
//
// (integers little endian). The header's own checksum tells a damaged
// length (framing lost) from a damaged payload (framing intact: the next
// record starts right after it), and the marker lets a reader find the
// next record after damage. The marker holds bytes that are never valid
// UTF-8 (0xFF, 0xFE), and every string a record holds is valid UTF-8, so
// no content can forge a record.
//
// Format 1, written before, is records of length | CRC-32C | payload with no
// file header; it is read as before, and a log in it is rewritten in format
// 2 when it is opened intact.
const (
	fileHeader   = "DMARLOG\x02"
	frameHeader2 = 16
	frameHeader1 = 8
)

var recordMarker = [4]byte{0xFF, 'd', 'r', 0xFE}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// maxRecord bounds one record, so that a damaged length cannot make a
// reader allocate gigabytes.
const maxRecord = 1 << 30

// appendFrame appends payload's format-2 frame to buf.
func appendFrame(buf, payload []byte) []byte {
	var h [frameHeader2]byte
	copy(h[:4], recordMarker[:])
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[8:12], crc32.Checksum(payload, crcTable))
	binary.LittleEndian.PutUint32(h[12:16], crc32.Checksum(h[:12], crcTable))
	return append(append(buf, h[:]...), payload...)
}

// Damage is a stretch of a log that holds no intact record.
type Damage struct {
	Offset int64 `json:"offset"` // its first byte
	End    int64 `json:"end"`    // the byte after it: the next intact record, or the end of the file
	// Kind is what was found at Offset: "checksum" (a record whose payload
	// fails its checksum: its frame held, so exactly one record is lost
	// there), "framing" (a damaged record header: where the next record
	// starts was lost), "header" (a damaged file header, which holds no
	// record) or "short" (a record cut off by the end of the file).
	Kind string `json:"kind"`
	// Records is how many records the stretch held: known where every
	// frame in it held, -1 where framing was lost.
	Records int `json:"records"`
}

// Describe says what a Kind means.
func (d Damage) Describe() string {
	switch d.Kind {
	case "checksum":
		return "a record whose checksum fails, its frame intact"
	case "framing":
		return "a damaged record header (framing lost)"
	case "header":
		return "a damaged file header"
	}
	return "a record cut off by the end of the file"
}

// scanResult is what a scan of a log found.
type scanResult struct {
	version int
	size    int64
	good    int64  // the end of the intact prefix: where a torn tail starts
	prefix  []span // the records of the intact prefix
	damage  []Damage
	after   int   // intact records after the first damage
	afterAt int64 // the first of them
	// unknown is set when a format-1 log's search for records after
	// damage ran out of budget: whether any follow is not known.
	unknown bool
}

type span struct{ at, n int64 } // a record's payload

// corrupt reports whether damage is followed by an intact record (or may
// be): more than a torn tail.
func (r *scanResult) corrupt() bool { return r.after > 0 || r.unknown }

// visitFunc is called with each intact record, in order; after is set for
// those that follow damage.
type visitFunc func(payload []byte, at int64, after bool) error

// scanLog reads the log in r (size bytes) from the start, calling visit
// with every intact record, and describes its damage.
func scanLog(r io.ReaderAt, size int64, visit visitFunc) (*scanResult, error) {
	res := &scanResult{version: 2, size: size}
	head := make([]byte, min(int64(len(fileHeader)), size))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, err
	}
	s := &scanner{r: r, size: size, res: res, visit: visit, budget: 64*size + 1<<20}
	switch {
	case string(head) == fileHeader:
		res.good = int64(len(fileHeader))
	case size < int64(len(fileHeader)) && bytes.HasPrefix([]byte(fileHeader), head):
		// A new file whose header was cut off: empty.
		return res, nil
	default:
		// Not format 2's header: format 1, unless format-2 records follow
		// (a damaged file header, which run reports as damage at byte 0).
		if at, err := s.next(0); err != nil {
			return nil, err
		} else if at == size {
			res.version = 1
		}
	}
	if err := s.run(res.good); err != nil {
		return nil, err
	}
	if d := res.damage; res.version == 2 && len(d) > 0 && d[0].Offset == 0 {
		d[0].Kind = "header"
		if d[0].End == int64(len(fileHeader)) {
			d[0].Records = 0
		}
	}
	return res, nil
}

type scanner struct {
	r      io.ReaderAt
	size   int64
	res    *scanResult
	visit  visitFunc
	budget int64 // format 1: checksum bytes a search for the next record may cost
	mem    []byte
}

// frame reads the record at off: its payload and frame length, or the
// kind of damage found there.
func (s *scanner) frame(off int64) (payload []byte, n int64, kind string, err error) {
	hlen := int64(frameHeader2)
	if s.res.version == 1 {
		hlen = frameHeader1
	}
	if s.size-off < hlen {
		return nil, 0, "short", nil
	}
	var h [frameHeader2]byte
	if _, err := s.r.ReadAt(h[:hlen], off); err != nil {
		return nil, 0, "", err
	}
	var length, sum uint32
	if s.res.version == 1 {
		length, sum = binary.LittleEndian.Uint32(h[:4]), binary.LittleEndian.Uint32(h[4:8])
	} else {
		if [4]byte(h[:4]) != recordMarker || crc32.Checksum(h[:12], crcTable) != binary.LittleEndian.Uint32(h[12:16]) {
			return nil, 0, "framing", nil
		}
		length, sum = binary.LittleEndian.Uint32(h[4:8]), binary.LittleEndian.Uint32(h[8:12])
	}
	// Format 1 never wrote an empty record (a batch is never empty), and
	// eight zero bytes would pass for one.
	if length > maxRecord || length == 0 && s.res.version == 1 {
		return nil, 0, "framing", nil
	}
	if int64(length) > s.size-off-hlen {
		return nil, 0, "short", nil
	}
	payload = make([]byte, length)
	if _, err := s.r.ReadAt(payload, off+hlen); err != nil {
		return nil, 0, "", err
	}
	if crc32.Checksum(payload, crcTable) != sum {
		return nil, hlen + int64(length), "checksum", nil
	}
	return payload, hlen + int64(length), "", nil
}

func (s *scanner) run(off int64) error {
	res := s.res
	var cur *Damage
	for off < s.size {
		payload, n, kind, err := s.frame(off)
		if err != nil {
			return err
		}
		if kind == "" {
			after := len(res.damage) > 0 || cur != nil
			if cur != nil {
				cur.End = off
				res.damage = append(res.damage, *cur)
				cur = nil
			}
			if after {
				if res.after == 0 {
					res.afterAt = off
				}
				res.after++
			} else {
				res.prefix = append(res.prefix, span{off + n - int64(len(payload)), int64(len(payload))})
				res.good = off + n
			}
			if err := s.visit(payload, off, after); err != nil {
				return err
			}
			off += n
			continue
		}
		if cur == nil {
			cur = &Damage{Offset: off, Kind: kind}
		}
		if kind == "checksum" && cur.Records >= 0 {
			// The frame held: the next record starts after this one. Format
			// 2's header checksum says so; in format 1 the next record
			// (or the end of the file) must be there.
			held := s.res.version == 2 || off+n == s.size
			if !held {
				_, _, k, err := s.frame(off + n)
				if err != nil {
					return err
				}
				held = k == ""
			}
			if held {
				cur.Records++
				off += n
				continue
			}
		}
		next, err := s.next(off + 1)
		if err != nil {
			return err
		}
		if kind == "short" && next == s.size && cur.Records >= 0 {
			cur.Records++ // one record, cut off
		} else {
			cur.Records = -1
		}
		off = next
	}
	if cur != nil {
		cur.End = s.size
		res.damage = append(res.damage, *cur)
	}
	return nil
}

// next finds the first offset at or after from where an intact record
// starts; the size when there is none.
func (s *scanner) next(from int64) (int64, error) {
	if s.res.version == 1 {
		return s.next1(from)
	}
	const chunk = 1 << 20
	buf := make([]byte, chunk+len(recordMarker)-1)
	for at := from; at < s.size; {
		n, err := s.r.ReadAt(buf[:min(int64(len(buf)), s.size-at)], at)
		if err != nil && err != io.EOF {
			return 0, err
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], recordMarker[:])
			if j < 0 {
				break
			}
			cand := at + int64(i+j)
			if _, _, kind, err := s.frame(cand); err != nil {
				return 0, err
			} else if kind == "" {
				return cand, nil
			}
			i += j + 1
		}
		if at+int64(n) >= s.size {
			break
		}
		at += chunk
	}
	return s.size, nil
}

// next1 is next for format 1, which has no marker: every offset is tried,
// reading the rest of the file once; a search that costs more than budget
// checksum bytes stops, and whether a record follows is then unknown.
func (s *scanner) next1(from int64) (int64, error) {
	if s.mem == nil {
		s.mem = make([]byte, s.size)
		if _, err := s.r.ReadAt(s.mem, 0); err != nil && err != io.EOF {
			return 0, err
		}
	}
	b := s.mem
	for o := from; o+frameHeader1 <= s.size; o++ {
		n := int64(binary.LittleEndian.Uint32(b[o:]))
		if n == 0 || n > s.size-o-frameHeader1 {
			continue
		}
		if s.budget -= n; s.budget < 0 {
			s.res.unknown = true
			return s.size, nil
		}
		if crc32.Checksum(b[o+frameHeader1:o+frameHeader1+n], crcTable) == binary.LittleEndian.Uint32(b[o+4:]) {
			return o, nil
		}
	}
	return s.size, nil
}

// CorruptError is Open's error for a log damaged before its end: damage
// followed by intact records, which no crash makes (only the end of the log
// is ever being written). The log is left as it was.
type CorruptError struct {
	Log     string
	Damage  Damage // the first damage
	Before  int    // intact records before it
	After   int    // intact records after it
	AfterAt int64  // the first of them
	Unknown bool   // format 1: whether records follow could not be told
}

func (e *CorruptError) Error() string {
	follow := fmt.Sprintf("%d intact records follow it (the first at byte %d)", e.After, e.AfterAt)
	if e.Unknown && e.After == 0 {
		follow = "whether intact records follow it could not be told (a log written before format 2 has no record markers)"
	}
	return fmt.Sprintf("the document log %s is damaged at byte %d: %s. %s, and %d precede it. "+
		"A crash cannot do this, since only the end of the log is ever being written, so the log was left byte for byte as it was. "+
		"Run `dmar docs repair --state DIR` (DIR: the state folder) to set the damaged file aside and rebuild the log from every intact record, "+
		"or restore the folder from a backup (docs/durability.md)", e.Log, e.Damage.Offset, e.Damage.Describe(), upper(follow), e.Before)
}

func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// ErrCorrupt matches a *CorruptError with errors.Is.
var ErrCorrupt = errors.New("the document log is corrupt")

func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
