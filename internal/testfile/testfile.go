// Package testfile reads the files tests read their inputs from or compare
// with (testdata fixtures, golden files, models): a file that cannot be
// read fails the test.
package testfile

import (
	"os"
	"testing"
)

// Read is the content of the file at path; an error fails the test.
func Read(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
