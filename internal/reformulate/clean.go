package reformulate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/kg"
)

// ErrNotAQuery marks a model's reply that Clean refuses: it echoes the
// prompt, copies the evidence, answers the question, or drifts off it. The
// pipeline then falls back to the built-in reformulator and says why.
var ErrNotAQuery = errors.New("reply is not a search query")

// MaxQueryWords bounds a cleaned reformulation; a longer one is evidence
// copied or an explanation, not a query.
const MaxQueryWords = 60

// copyRun is how many consecutive words of one evidence snippet a
// reformulation may repeat: more is the snippet copied, not a query.
const copyRun = 10

var (
	// Prompt-format lines the model repeats: "[Original Query: ...]", "[Evidence 2: ...]".
	echoRe = regexp.MustCompile(`(?i)^\[?\s*(original query|evidence\s*\d*)\s*:`)
	// Labels small models put before the query.
	labelRe = regexp.MustCompile(`(?i)^(reformulated|rewritten|new|search|improved|final)?\s*(query|search query|reformulation)\s*:\s*|^reformulate\s*:\s*`)
	// Labels that announce an answer rather than a query.
	answerRe = regexp.MustCompile(`(?i)^(answer|the answer is|final answer)\b\s*:?`)
)

// Clean turns a chat model's reply into Q': think blocks, surrounding quotes
// and markdown, labels and echoed prompt lines are removed, and the first
// line left is the query. It refuses (ErrNotAQuery, with the reason) a reply
// that is empty once cleaned, announces an answer, copies copyRun or more
// consecutive words of an evidence snippet, runs over MaxQueryWords words, or
// shares no content word with the original query (an answer posing as a
// query, e.g. "English").
func Clean(reply string, in Input) (string, error) {
	s := chat.StripThinking(reply)
	if i := strings.Index(s, "<think>"); i >= 0 {
		s = s[:i] // an unclosed think block: the reply was cut while reasoning
	}
	var q string
	for _, line := range strings.Split(s, "\n") {
		line = trimDecoration(line)
		if line == "" || echoRe.MatchString(line) {
			continue
		}
		line = trimDecoration(labelRe.ReplaceAllString(line, ""))
		if line == "" {
			continue
		}
		q = line
		break
	}
	q = strings.Join(strings.Fields(q), " ")
	switch {
	case q == "":
		return "", fmt.Errorf("%w: nothing left after removing %s", ErrNotAQuery, describeRemoved(s))
	case answerRe.MatchString(q):
		return "", fmt.Errorf("%w: it is an answer (%q)", ErrNotAQuery, clip(q))
	}
	words := strings.Fields(q)
	if len(words) > MaxQueryWords {
		return "", fmt.Errorf("%w: %d words, more than %d", ErrNotAQuery, len(words), MaxQueryWords)
	}
	for i, a := range in.Anchors {
		if copied(q, a.Snippet) {
			return "", fmt.Errorf("%w: it copies evidence %d", ErrNotAQuery, i+1)
		}
	}
	if !sharesContent(q, in.Query) {
		return "", fmt.Errorf("%w: %q shares no word with the original query", ErrNotAQuery, clip(q))
	}
	return q, nil
}

// trimDecoration removes space, surrounding quotes, backticks, markdown
// emphasis and list bullets.
func trimDecoration(s string) string {
	for {
		t := strings.TrimSpace(s)
		t = strings.TrimLeft(t, "-*•> ")
		t = strings.Trim(t, "`*_")
		for _, p := range [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}, {"«", "»"}} {
			if len(t) >= len(p[0])+len(p[1]) && strings.HasPrefix(t, p[0]) && strings.HasSuffix(t, p[1]) {
				t = t[len(p[0]) : len(t)-len(p[1])]
			}
		}
		if t == s {
			return t
		}
		s = t
	}
}

func describeRemoved(s string) string {
	if strings.TrimSpace(s) == "" {
		return "think blocks and space"
	}
	return "echoed prompt lines and labels"
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "..."
	}
	return s
}

// normWords lowercases s and splits it into words of letters and digits.
func normWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// copied reports whether q repeats copyRun consecutive words of snippet.
func copied(q, snippet string) bool {
	sw := normWords(snippet)
	if len(sw) < copyRun {
		return false
	}
	runs := map[string]bool{}
	for i := 0; i+copyRun <= len(sw); i++ {
		runs[strings.Join(sw[i:i+copyRun], " ")] = true
	}
	qw := normWords(q)
	for i := 0; i+copyRun <= len(qw); i++ {
		if runs[strings.Join(qw[i:i+copyRun], " ")] {
			return true
		}
	}
	return false
}

// sharesContent reports whether q keeps at least one content word of the
// original query (kg.NormalizeForm's words, minus question words and
// function words). A query with no content word passes.
func sharesContent(q, original string) bool {
	have := map[string]bool{}
	for _, w := range strings.Fields(kg.NormalizeForm(q)) {
		have[w] = true
	}
	content := 0
	for _, w := range strings.Fields(kg.NormalizeForm(original)) {
		if stopWords[w] || len(w) < 3 {
			continue
		}
		content++
		if have[w] {
			return true
		}
	}
	return content == 0
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("what which who whom whose when where why how the and for was were are is did does do has have had " +
		"that this these those with from into of in on at by to an as be been being it its their his her they them there " +
		"can could would should will may might about also than then both either neither not no yes") {
		stopWords[w] = true
	}
}
