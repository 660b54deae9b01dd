package npy

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/testfile"
)

func TestWriteNpy(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		data   any
		shape  []int
		header string
	}{
		{"f4", []float32{1, 2.5, -3, 4, 5, 6}, []int{2, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
		{"i4", []int32{7, -8, 9}, []int{3}, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"},
	} {
		p := filepath.Join(dir, tc.name+".npy")
		if err := Write(p, tc.data, tc.shape...); err != nil {
			t.Fatal(err)
		}
		b := testfile.Read(t, p)
		if !bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")) {
			t.Fatalf("%s: bad magic %q", tc.name, b[:8])
		}
		hl := int(binary.LittleEndian.Uint16(b[8:10]))
		if (10+hl)%64 != 0 || b[10+hl-1] != '\n' || !bytes.HasPrefix(b[10:], []byte(tc.header)) {
			t.Fatalf("%s: header %q", tc.name, b[10:10+hl])
		}
		var want bytes.Buffer
		if err := binary.Write(&want, binary.LittleEndian, tc.data); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b[10+hl:], want.Bytes()) {
			t.Errorf("%s: data differs", tc.name)
		}
	}
	if err := Write(filepath.Join(dir, "bad.npy"), []float32{1, 2, 3}, 2, 2); err == nil {
		t.Error("shape [2 2] for 3 values: no error")
	}
	if err := Write(filepath.Join(dir, "bad.npy"), []string{"x"}, 1); err == nil {
		t.Error("[]string: no error")
	}
}
