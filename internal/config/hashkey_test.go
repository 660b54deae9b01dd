package config

import (
	"strings"
	"testing"
)

// The first line is the key, its line end not; a short key is refused.
func TestHashKey(t *testing.T) {
	h, err := HashKey(strings.NewReader("0123456789abcdef\r\nsecond line"))
	if err != nil {
		t.Fatal(err)
	}
	// the SHA-256 of the key 0123456789abcdef
	if h != "9f9f5111f7b27a781f1f1ddde5ebc2dd2b796bfc7365c9c28b548e564176929f" {
		t.Errorf("hash %s", h)
	}
	if _, err := HashKey(strings.NewReader("short\n")); err == nil || !strings.Contains(err.Error(), "shorter than 16") {
		t.Errorf("short key: %v", err)
	}
}
