package config

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MinKeyChars is the shortest API key dmar config hash-key accepts.
const MinKeyChars = 16

// ErrShortKey is HashKey's refusal of a key under MinKeyChars.
var ErrShortKey = fmt.Errorf("the key is shorter than %d characters", MinKeyChars)

// HashKey reads an API key, the first line of r, and returns the hex SHA-256
// that server.auth.keys[].sha256 holds.
func HashKey(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	key := strings.TrimRight(line, "\r\n")
	if len(key) < MinKeyChars {
		return "", ErrShortKey
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:]), nil
}
