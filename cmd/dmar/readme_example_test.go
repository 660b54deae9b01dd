package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The README's first example is make demo's answer, produced here so that it
// cannot drift from what the demo prints: the question is read from
// scripts/demo.sh, asked of `dmar serve` over codexm-film as the demo starts
// it, and printed by scripts/show_answer.py as the demo prints it.
//
//	go test ./cmd/dmar -run TestReadmeExample                  # compare
//	go test ./cmd/dmar -run TestReadmeExample -update-readme   # rewrite the block

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's example block with today's output")

const (
	exampleBegin = "<!-- example -->"
	exampleEnd   = "<!-- /example -->"
	// Printed scores may move in the last digit between CPUs (int8 kernels
	// differ); anything larger is a changed answer.
	scoreTolerance = 0.0015
)

func TestReadmeExample(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the example is printed by scripts/show_answer.py")
	}
	query := demoQuery(t, filepath.Join(root, "scripts", "demo.sh"))
	readmePath := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	head, want, tail, err := exampleBlock(string(readme))
	if err != nil {
		t.Fatalf("%s: %v", readmePath, err)
	}

	p := startDmar(t, nil)
	r := p.post("/v1/retrieve", query)
	if r.err != nil || r.code != 200 {
		t.Fatalf("POST /v1/retrieve %s: %d %v\n%s", query, r.code, r.err, r.body)
	}
	show := exec.Command(python, filepath.Join(root, "scripts", "show_answer.py"))
	show.Stdin = strings.NewReader(r.body)
	var stderr bytes.Buffer
	show.Stderr = &stderr
	out, err := show.Output()
	if err != nil {
		t.Fatalf("scripts/show_answer.py: %v\n%s", err, stderr.String())
	}
	got := string(out)

	if *updateReadme {
		doc := head + exampleBegin + "\n```\n" + got + "```\n" + exampleEnd + tail
		if err := os.WriteFile(readmePath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: example rewritten", readmePath)
		return
	}
	if diff := compareExample(want, got); diff != "" {
		t.Errorf("README.md's example is not what make demo prints today (%s); "+
			"rerun with -update-readme if the change is meant.\nREADME:\n%s\ntoday:\n%s", diff, want, got)
	}
}

// demoQuery returns the request body scripts/demo.sh sends (its q='...' line).
func demoQuery(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^q='(\{.*\})'$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no q='{...}' line with the demo's request", path)
	}
	return string(m[1])
}

// exampleBlock splits a README around its example block and returns the
// fenced block's content between the markers.
func exampleBlock(doc string) (head, body, tail string, err error) {
	head, rest, ok := strings.Cut(doc, exampleBegin)
	if !ok {
		return "", "", "", fmt.Errorf("no %s marker", exampleBegin)
	}
	inner, tail, ok := strings.Cut(rest, exampleEnd)
	if !ok {
		return "", "", "", fmt.Errorf("no %s marker after %s", exampleEnd, exampleBegin)
	}
	inner = strings.TrimSpace(inner)
	if !strings.HasPrefix(inner, "```") || !strings.HasSuffix(inner, "```") {
		return "", "", "", fmt.Errorf("the example between the markers is not one fenced block")
	}
	inner = strings.TrimSuffix(inner, "```")
	if _, body, ok = strings.Cut(inner, "\n"); !ok {
		return "", "", "", fmt.Errorf("the example's fenced block is empty")
	}
	return head, body, tail, nil
}

// compareExample says where got departs from want, or "" when they agree:
// the same lines and words, numbers within scoreTolerance; on the timings
// line only the stages' names count.
func compareExample(want, got string) string {
	wl := strings.Split(strings.TrimRight(want, "\n"), "\n")
	gl := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(wl) != len(gl) {
		return fmt.Sprintf("%d lines in the README, %d today", len(wl), len(gl))
	}
	for i := range wl {
		timings := strings.HasPrefix(wl[i], "Timings (ms):")
		ww, gw := strings.Fields(wl[i]), strings.Fields(gl[i])
		if len(ww) != len(gw) {
			return fmt.Sprintf("line %d: %q against %q", i+1, wl[i], gl[i])
		}
		for j := range ww {
			if ww[j] == gw[j] {
				continue
			}
			a, errA := strconv.ParseFloat(strings.TrimRight(ww[j], ","), 64)
			b, errB := strconv.ParseFloat(strings.TrimRight(gw[j], ","), 64)
			if errA == nil && errB == nil && (timings || math.Abs(a-b) <= scoreTolerance) {
				continue
			}
			return fmt.Sprintf("line %d: %q against %q", i+1, wl[i], gl[i])
		}
	}
	return ""
}

func TestCompareExample(t *testing.T) {
	readme := "Results:\n  1. Inception (Q25188)  final 68.739  sem 0.463\nTimings (ms): encode 3.1, search 1.0\n"
	for _, c := range []struct {
		name, today string
		agree       bool
	}{
		{"same", readme, true},
		{"last digit", "Results:\n  1. Inception (Q25188)  final 68.740  sem 0.462\nTimings (ms): encode 3.1, search 1.0\n", true},
		{"other timings", "Results:\n  1. Inception (Q25188)  final 68.739  sem 0.463\nTimings (ms): encode 9.7, search 0.2\n", true},
		{"other score", "Results:\n  1. Inception (Q25188)  final 68.139  sem 0.463\nTimings (ms): encode 3.1, search 1.0\n", false},
		{"other film", "Results:\n  1. Memento (Q190525)  final 68.739  sem 0.463\nTimings (ms): encode 3.1, search 1.0\n", false},
		{"other stage", "Results:\n  1. Inception (Q25188)  final 68.739  sem 0.463\nTimings (ms): encode 3.1, rank 1.0\n", false},
		{"a line more", readme + "Fallback:     x: y\n", false},
	} {
		if diff := compareExample(readme, c.today); (diff == "") != c.agree {
			t.Errorf("%s: compareExample = %q, want agreement %v", c.name, diff, c.agree)
		}
	}
	if _, _, _, err := exampleBlock("no markers here"); err == nil {
		t.Error("exampleBlock accepted a README without the markers")
	}
	head, body, tail, err := exampleBlock("a\n" + exampleBegin + "\n```\nQuery: q\n```\n" + exampleEnd + "\nb\n")
	if err != nil || head != "a\n" || body != "Query: q\n" || tail != "\nb\n" {
		t.Errorf("exampleBlock = %q, %q, %q, %v", head, body, tail, err)
	}
}
