package docstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// logPayloads are n distinct payloads of varied sizes.
func logPayloads(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("record %d %s", i, strings.Repeat("x", (i*37)%90)))
	}
	return out
}

// offsets are where each record of a format-2 log of ps starts.
func offsets(ps [][]byte) []int64 {
	out := make([]int64, len(ps))
	at := int64(len(fileHeader))
	for i, p := range ps {
		out[i] = at
		at += frameHeader2 + int64(len(p))
	}
	return out
}

func writeRecords(t *testing.T, path string, ps [][]byte) {
	t.Helper()
	l, _, err := openLog(path, logOptions{sync: true}, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := l.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
}

// replayed opens the log at path and returns its records and torn bytes.
func replayed(path string) ([][]byte, int64, error) {
	var got [][]byte
	l, torn, err := openLog(path, logOptions{}, func(p []byte) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return got, torn, l.Close()
}

// faultyFile is a log file that stops after left bytes: in "crash" mode
// the process dies there (nothing later reaches the file: no write, no
// truncate, no fsync); in "fail" mode one write fails there, partly
// written, and the file works again after; in "sync" mode the first fsync
// after left bytes fails.
type faultyFile struct {
	file
	mode    string
	left    int
	tripped bool
}

var errInjected = errors.New("injected fault")

func (f *faultyFile) Write(p []byte) (int, error) {
	if f.tripped && f.mode == "crash" {
		return 0, errInjected
	}
	if f.mode == "sync" || f.tripped || len(p) <= f.left {
		f.left -= len(p)
		return f.file.Write(p)
	}
	n, _ := f.file.Write(p[:f.left])
	f.tripped, f.left = true, 0
	return n, errInjected
}

func (f *faultyFile) Truncate(n int64) error {
	if f.tripped && f.mode == "crash" {
		return errInjected
	}
	return f.file.Truncate(n)
}

func (f *faultyFile) Seek(off int64, whence int) (int64, error) {
	if f.tripped && f.mode == "crash" {
		return 0, errInjected
	}
	return f.file.Seek(off, whence)
}

func (f *faultyFile) Sync() error {
	if f.mode == "sync" && !f.tripped && f.left <= 0 {
		f.tripped = true
		return errInjected
	}
	if f.tripped && f.mode == "crash" {
		return errInjected
	}
	return nil // what reaches the file is what a crash keeps; real fsyncs only slow the test
}

// TestFaultAtEveryByte injects a fault after N bytes of appends, for every
// N across a few records, then reopens the log: every acknowledged record
// is there, in order, and the one being written when the fault came is
// absent or whole; nothing is ever taken for corruption.
func TestFaultAtEveryByte(t *testing.T) {
	ps := [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 40), []byte("ccc"), bytes.Repeat([]byte("d"), 200), []byte("e")}
	total := 0
	for _, p := range ps {
		total += frameHeader2 + len(p)
	}
	path := filepath.Join(t.TempDir(), "f.log")
	for _, mode := range []string{"crash", "fail", "sync"} {
		for n := 0; n <= total; n++ {
			os.Remove(path)
			l, _, err := openLog(path, logOptions{sync: true}, func([]byte) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			ff := &faultyFile{file: l.w, mode: mode, left: n}
			l.w = ff
			var acked []int
			inflight := -1
			for i, p := range ps {
				if err := l.Append(p); err == nil {
					acked = append(acked, i)
				} else if inflight < 0 {
					inflight = i
				}
			}
			l.Close()
			got, _, err := replayed(path)
			if err != nil {
				t.Fatalf("%s after %d bytes: reopen: %v", mode, n, err)
			}
			var want [][]byte
			for _, i := range acked {
				want = append(want, ps[i])
			}
			ok := reflect.DeepEqual(got, want)
			if !ok && inflight >= 0 {
				// The record being written may be whole, in its place.
				var with [][]byte
				for i := range ps {
					if i == inflight || slices.Contains(acked, i) {
						with = append(with, ps[i])
					}
				}
				ok = reflect.DeepEqual(got, with)
			}
			if !ok {
				t.Fatalf("%s after %d bytes: acknowledged %v (in flight %d), reopened with %q", mode, n, acked, inflight, got)
			}
			if mode == "fail" && len(acked) != len(ps)-1 && n < total {
				t.Fatalf("fail after %d bytes: %d of %d records acknowledged; a failed write must not stop the next ones", n, len(acked), len(ps))
			}
			if mode != "fail" && inflight >= 0 && len(acked) != inflight {
				t.Fatalf("%s after %d bytes: records acknowledged after a lost write or fsync: %v", mode, n, acked)
			}
		}
	}
}

// A crash while a new log's header is being written leaves a prefix of
// it: the log opens empty.
func TestHeaderCutOff(t *testing.T) {
	dir := t.TempDir()
	for n := 0; n < len(fileHeader); n++ {
		path := filepath.Join(dir, fmt.Sprintf("h%d.log", n))
		if err := os.WriteFile(path, []byte(fileHeader[:n]), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _, err := replayed(path)
		if err != nil || len(got) != 0 {
			t.Fatalf("header cut at %d: %q, %v", n, got, err)
		}
		writeRecords(t, path, logPayloads(2))
		if got, _, err := replayed(path); err != nil || len(got) != 2 {
			t.Fatalf("header cut at %d, then two records: %d, %v", n, len(got), err)
		}
	}
}

// Only damage with nothing intact after it is a torn tail, cut off.
func TestTornTailIsCut(t *testing.T) {
	ps := logPayloads(40)
	offs := offsets(ps)
	dir := t.TempDir()
	path := filepath.Join(dir, "t.log")
	writeRecords(t, path, ps)
	orig, _ := os.ReadFile(path)
	last := offs[len(offs)-1]
	for name, b := range map[string][]byte{
		"cut in the header":      orig[:last+5],
		"cut in the payload":     orig[:len(orig)-3],
		"flipped payload bit":    flip(orig, len(orig)-2),
		"flipped length bit":     flip(orig, int(last)+5),
		"zeros after the record": append(append([]byte(nil), orig...), make([]byte, 4096)...),
		"garbage after":          append(append([]byte(nil), orig...), "garbage"...),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, torn, err := replayed(path)
			want := ps
			if len(b) <= len(orig) {
				want = ps[:39]
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%d records, %v; want %d", len(got), err, len(want))
			}
			if st, _ := os.Stat(path); st.Size() != int64(len(b))-torn {
				t.Fatalf("file %d bytes after cutting %d of %d", st.Size(), torn, len(b))
			}
		})
	}
}

func flip(b []byte, at int) []byte {
	c := append([]byte(nil), b...)
	c[at] ^= 0x10
	return c
}

// Damage before intact records is corruption: open refuses it naming the
// offset and how many intact records follow, and leaves the file as it
// was; repair keeps every intact record, before and after, and the
// damaged file.
func TestCorruptionIsRefusedAndRepaired(t *testing.T) {
	ps := logPayloads(40)
	offs := offsets(ps)
	r20 := int(offs[20])
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
		kind   string
		lost   []int // records lost
	}{
		{"payload bit", func(b []byte) []byte { return flip(b, r20+frameHeader2+3) }, "checksum", []int{20}},
		{"length bit", func(b []byte) []byte { return flip(b, r20+5) }, "framing", []int{20}},
		{"marker bit", func(b []byte) []byte { return flip(b, r20) }, "framing", []int{20}},
		{"zeroed span", func(b []byte) []byte {
			c := append([]byte(nil), b...)
			copy(c[r20+10:], make([]byte, int(offs[22])-r20))
			return c
		}, "framing", []int{20, 21, 22}},
		{"two damaged records", func(b []byte) []byte { return flip(flip(b, r20+frameHeader2), int(offs[30])+frameHeader2) }, "checksum", []int{20, 30}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, LogFile)
			writeRecords(t, path, ps)
			orig, _ := os.ReadFile(path)
			bad := c.damage(orig)
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := replayed(path)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open = %v, want a *CorruptError", err)
			}
			if ce.Damage.Offset != offs[20] || ce.Damage.Kind != c.kind || ce.Before != 20 || ce.After != 20-len(c.lost) {
				t.Errorf("error %+v, want damage at %d (%s), 20 before", ce, offs[20], c.kind)
			}
			for _, s := range []string{path, fmt.Sprintf("byte %d", offs[20]), fmt.Sprintf("%d intact records follow", ce.After), "dmar docs repair"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message lacks %q: %v", s, err)
				}
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
				t.Fatal("the refused log was changed")
			}

			dry, err := repairLog(path, true, nil)
			if err != nil || dry.Repaired || dry.Kept != 40-len(c.lost) {
				t.Fatalf("dry run: %+v, %v", dry, err)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
				t.Fatal("a dry run changed the log")
			}
			rep, err := repairLog(path, false, nil)
			if err != nil || !rep.Repaired || rep.Kept != 40-len(c.lost) || rep.Before != 20 {
				t.Fatalf("repair: %+v, %v", rep, err)
			}
			if aside, _ := os.ReadFile(rep.SetAside); !bytes.Equal(aside, bad) {
				t.Fatalf("the damaged file was not kept as it was at %s", rep.SetAside)
			}
			known := 0
			for _, d := range rep.Damage {
				known += max(d.Records, 0)
			}
			if c.kind == "checksum" && known != len(c.lost) {
				t.Errorf("damage %+v, want %d records named lost", rep.Damage, len(c.lost))
			}
			got, _, err := replayed(path)
			var want [][]byte
			for i, p := range ps {
				if !slices.Contains(c.lost, i) {
					want = append(want, p)
				}
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("after repair %d records, %v; want %d", len(got), err, len(want))
			}
			if again, err := repairLog(path, false, nil); err != nil || again.Damaged() || again.Repaired {
				t.Errorf("a repaired log repaired again: %+v, %v", again, err)
			}
		})
	}
}

// v1Log is a log in format 1: length | CRC-32C | payload, no header.
func v1Log(ps [][]byte) []byte {
	var b []byte
	for _, p := range ps {
		var h [8]byte
		binary.LittleEndian.PutUint32(h[:4], uint32(len(p)))
		binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(p, crcTable))
		b = append(append(b, h[:]...), p...)
	}
	return b
}

// A log written before format 2 opens, and is rewritten in format 2; its
// torn tail is cut, and damage before intact records refused as well.
func TestFormat1LogOpens(t *testing.T) {
	ps := logPayloads(10)
	dir := t.TempDir()
	path := filepath.Join(dir, "v1.log")
	old := v1Log(ps)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	got, torn, err := replayed(path)
	if err != nil || torn != 0 || !reflect.DeepEqual(got, ps) {
		t.Fatalf("format 1: %d records, torn %d, %v", len(got), torn, err)
	}
	if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, []byte(fileHeader)) {
		t.Fatal("not rewritten in format 2")
	}
	writeRecords(t, path, [][]byte{[]byte("new")})
	if got, _, err := replayed(path); err != nil || len(got) != 11 || string(got[10]) != "new" {
		t.Fatalf("after an append: %d, %v", len(got), err)
	}

	if err := os.WriteFile(path, old[:len(old)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, torn, err := replayed(path); err != nil || torn == 0 || !reflect.DeepEqual(got, ps[:9]) {
		t.Fatalf("format 1, torn: %d records, torn %d, %v", len(got), torn, err)
	}

	bad := append([]byte(nil), old...)
	at := len(v1Log(ps[:5])) + 8 + 2
	bad[at] ^= 1
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = replayed(path)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.After != 4 || ce.Before != 5 {
		t.Fatalf("format 1, corrupt: %+v %v", ce, err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, bad) {
		t.Fatal("a refused format-1 log was changed")
	}
}
