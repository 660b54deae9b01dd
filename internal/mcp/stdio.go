package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one stdio message, as the SDK's stdio transport does by
// default.
const maxLine = mcp.DefaultMaxLineLength

// ServeIO serves one client over newline-delimited JSON-RPC on in and out
// until in ends or ctx does. A line that is not JSON is answered with a
// parse error (-32700), one that is not a JSON-RPC message with an invalid
// request (-32600), and the session goes on: the SDK's transport would end
// it, leaving the client a broken pipe.
func (s *Service) ServeIO(ctx context.Context, in io.Reader, out io.Writer) error {
	srv := s.read
	if s.canWrite(s.stdioHeader()) {
		srv = s.write
	}
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(screen(in, pw, w)) }()
	defer pr.Close()
	err := srv.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: w})
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// screen copies the well-formed JSON-RPC lines of in to good and answers
// each other line on reply.
func screen(in io.Reader, good, reply io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var answer []byte
			if tooLong {
				answer = errorLine(nil, jsonrpc.CodeParseError, fmt.Sprintf("a message over %d bytes", maxLine))
			} else {
				answer = check(line)
			}
			if answer != nil {
				if _, werr := reply.Write(answer); werr != nil {
					return werr
				}
			} else if _, werr := good.Write(append(line, '\n')); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line without its newline; past maxLine bytes it
// keeps none of it and reads on to its end (tooLong).
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := r.ReadLine()
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != nil || !isPrefix {
			return line, tooLong, err
		}
	}
}

// check is the error line answering a line that is not a JSON-RPC message
// or batch, or nil for one that is.
func check(line []byte) []byte {
	if !json.Valid(line) {
		return errorLine(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	msgs := []json.RawMessage{line}
	if t := bytes.TrimSpace(line); t[0] == '[' {
		if json.Unmarshal(line, &msgs) != nil || len(msgs) == 0 {
			return errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
		}
	}
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			var v struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(m, &v) // best effort: a reply without an id where there is none
			return errorLine(v.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		}
	}
	return nil
}

// errorLine is a JSON-RPC error response line for id (null when unknown).
func errorLine(id json.RawMessage, code int64, message string) []byte {
	if !json.Valid(id) {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	return append(b, '\n')
}

// lockedWriter serialises the SDK's writes and the screen's: each is one
// whole line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) Close() error { return nil }
