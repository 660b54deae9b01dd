package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dmar-kg/dmar/internal/chat"
)

// ReplyCache is the reader's replies kept in one JSON-lines file, keyed by
// the model file's sha256 and the sha256 of the exact request (messages,
// reply schema and length bound): a rerun asks the reader nothing, an
// interrupted run resumes where it stopped, two systems that show the
// reader the same prompt pay for it once, and another model misses. Each
// reply is appended and synced before it is used, so a reader or a run that
// dies loses no reply it had given. The file is meant to be committed.
type ReplyCache struct {
	path  string
	model string

	mu      sync.Mutex
	replies map[string]string // request sha256 -> reply, this model's
	f       *os.File
	// Bad counts the lines that did not read as a reply (a torn last line
	// after a crash, a hand edit); they are reported and kept in the file.
	Bad int
}

type cacheLine struct {
	Model   string `json:"model_sha256"`
	Request string `json:"request_sha256"`
	Reply   string `json:"reply"`
}

// OpenReplyCache reads path (a missing file is an empty cache) and keeps
// the replies of the model whose weights have sha256 model.
func OpenReplyCache(path, model string) (*ReplyCache, error) {
	if len(model) != 64 {
		return nil, fmt.Errorf("reply cache %s: the model's sha256 must be 64 hex digits, got %q", path, model)
	}
	c := &ReplyCache{path: path, model: model, replies: map[string]string{}}
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reply cache: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l cacheLine
		if json.Unmarshal(line, &l) != nil || len(l.Model) != 64 || len(l.Request) != 64 {
			c.Bad++
			continue
		}
		if l.Model == model {
			c.replies[l.Request] = l.Reply
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reply cache %s: %w", path, err)
	}
	c.f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("reply cache: %w", err)
	}
	// A torn last line (no newline) stays as it is, reported; the next
	// reply starts on a line of its own.
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		if _, err := c.f.WriteString("\n"); err != nil {
			c.f.Close()
			return nil, fmt.Errorf("reply cache %s: %w", path, err)
		}
	}
	return c, nil
}

// Len is the number of this model's replies held.
func (c *ReplyCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.replies)
}

// RequestKey is the sha256 of a request: its messages, reply schema (nil:
// free text) and length bound.
func RequestKey(msgs []chat.Message, schema *chat.Schema, maxTokens int) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(msgs)
	if schema != nil {
		_ = enc.Encode(schema.Name)
		h.Write(schema.Schema)
	}
	fmt.Fprintf(h, "\x00%d", maxTokens)
	return hex.EncodeToString(h.Sum(nil))
}

// Get returns the reply to the request with key, if held.
func (c *ReplyCache) Get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.replies[key]
	return r, ok
}

// Put appends a reply and syncs the file before it returns.
func (c *ReplyCache) Put(key, reply string) error {
	line, err := json.Marshal(cacheLine{Model: c.model, Request: key, Reply: reply})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.replies[key]; ok {
		return nil
	}
	if _, err := c.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("reply cache %s: %w", c.path, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("reply cache %s: %w", c.path, err)
	}
	c.replies[key] = reply
	return nil
}

// Close closes the file.
func (c *ReplyCache) Close() error {
	if c == nil || c.f == nil {
		return nil
	}
	return c.f.Close()
}

var _ io.Closer = (*ReplyCache)(nil)
