// Package npy writes numpy's .npy files, the format dmar's training data
// exporters hand to the Python training scripts.
package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// Write writes a little-endian .npy (format 1.0) file. data is []float32,
// []int32 or []int64; shape must match its length.
func Write(path string, data any, shape ...int) error {
	var descr string
	var n int
	switch d := data.(type) {
	case []float32:
		descr, n = "<f4", len(d)
	case []int32:
		descr, n = "<i4", len(d)
	case []int64:
		descr, n = "<i8", len(d)
	default:
		return fmt.Errorf("npy %s: unsupported type %T", path, data)
	}
	size := 1
	dims := make([]string, len(shape))
	for i, s := range shape {
		size *= s
		dims[i] = fmt.Sprint(s)
	}
	if size != n {
		return fmt.Errorf("npy %s: shape %v holds %d values, have %d", path, shape, size, n)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	// Pad so that magic(6)+version(2)+len(2)+header+\n is a multiple of 64.
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(w, binary.LittleEndian, uint16(len(header))) // a bufio.Writer: Flush reports its error
	w.WriteString(header)
	if err := binary.Write(w, binary.LittleEndian, data); err != nil {
		f.Close()
		return fmt.Errorf("npy %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("npy %s: %w", path, err)
	}
	return f.Close()
}
