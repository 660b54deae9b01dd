package chat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// Stream sends the messages with "stream": true and calls onDelta with each
// piece of the first choice's content as the endpoint sends it (server-sent
// events, as OpenAI's API and llama.cpp's server write them). It returns the
// whole content. An error from onDelta stops the stream and is returned.
func (c Client) Stream(ctx context.Context, msgs []Message, onDelta func(string) error) (string, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, err := c.post(ctx, msgs, true, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var all bytes.Buffer
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // comments, event names, blank separators
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return all.String(), nil
		}
		var ev struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return all.String(), &responseError{msg: "decode stream event", err: err}
		}
		if len(ev.Choices) == 0 || ev.Choices[0].Delta.Content == "" {
			continue
		}
		d := ev.Choices[0].Delta.Content
		all.WriteString(d)
		if err := onDelta(d); err != nil {
			return all.String(), err
		}
	}
	if err := sc.Err(); err != nil {
		return all.String(), fmt.Errorf("read stream: %w", err)
	}
	// Some endpoints close the stream without [DONE]; what arrived is the reply.
	return all.String(), nil
}
