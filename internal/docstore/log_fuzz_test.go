package docstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLogCorruption damages a valid log (bit flips, zeroed spans, a cut;
// ops is read 5 bytes at a time: the kind, then a position) and checks the
// reader against what the damage left: a record is intact when its frame's
// bytes are unchanged. Open never panics; it replays exactly the intact
// records before the first damage, and succeeds only when no intact record
// follows the damage (a torn tail), leaving a refused file as it was;
// repair keeps every intact record, in order, and nothing else.
func FuzzLogCorruption(f *testing.F) {
	f.Add(uint8(40), []byte{0, 0, 0, 0x10, 0x04}) // a bit in the middle (issue 34)
	f.Add(uint8(40), []byte{1, 0, 0, 0x0f, 0xf0}) // a cut
	f.Add(uint8(5), []byte{2, 0, 0, 0, 30})       // zeros over a header
	f.Add(uint8(3), []byte{0, 0, 0, 0, 3})        // the file header
	f.Add(uint8(20), []byte{0, 0, 0, 1, 200, 2, 0, 0, 2, 0, 1, 0, 0, 3, 0})
	f.Add(uint8(1), []byte{})
	f.Fuzz(func(t *testing.T, n uint8, ops []byte) {
		ps := logPayloads(int(n%48) + 1)
		var orig []byte
		orig = append(orig, fileHeader...)
		for _, p := range ps {
			orig = appendFrame(orig, p)
		}
		b := append([]byte(nil), orig...)
		for len(ops) >= 5 && len(b) > 0 {
			at := int(binary.BigEndian.Uint32(ops[1:5])) % len(b)
			switch ops[0] % 3 {
			case 0:
				b[at] ^= 1 << (ops[0] / 3 % 8)
			case 1:
				b = b[:at]
			case 2:
				clear(b[at:min(len(b), at+int(ops[0]/3)+1)])
			}
			ops = ops[5:]
		}
		offs := offsets(ps)
		intact := func(i int) bool {
			end := offs[i] + frameHeader2 + int64(len(ps[i]))
			return end <= int64(len(b)) && bytes.Equal(b[offs[i]:end], orig[offs[i]:end])
		}
		headerOK := len(b) >= len(fileHeader) && string(b[:len(fileHeader)]) == fileHeader
		var want [][]byte // intact, in order
		prefix := 0       // intact records before the first damage
		for i := range ps {
			if intact(i) {
				want = append(want, ps[i])
				if headerOK && prefix == i {
					prefix++
				}
			}
		}
		tailIntact := len(want) > prefix

		path := filepath.Join(t.TempDir(), LogFile)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, _, err := replayed(path)
		switch {
		case tailIntact:
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d intact records after the damage, and open = %v (%d records)", len(want)-prefix, err, len(got))
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, b) {
				t.Fatal("a refused log was changed")
			}
		case err != nil:
			t.Fatalf("only a torn tail, and open = %v", err)
		case !reflect.DeepEqual(got, ps[:prefix]) && !(prefix == 0 && len(got) == 0):
			t.Fatalf("open replayed %d records, want the %d before the damage", len(got), prefix)
		}

		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := repairLog(path, false, nil); err != nil {
			t.Fatalf("repair: %v", err)
		}
		got, _, err = replayed(path)
		if err != nil || !(reflect.DeepEqual(got, want) || len(got) == 0 && len(want) == 0) {
			t.Fatalf("after repair %d records, %v; want the %d intact", len(got), err, len(want))
		}
	})
}
