package kg

import (
	"cmp"
	"regexp"
	"slices"
)

var (
	qidRe = regexp.MustCompile(`^Q[1-9]\d*$`)
	pidRe = regexp.MustCompile(`^P[1-9]\d*$`)
)

// ValidQID reports whether s is a Wikidata item id (Q followed by a number
// without leading zeros).
func ValidQID(s string) bool { return qidRe.MatchString(s) }

// ValidPID reports whether s is a Wikidata property id.
func ValidPID(s string) bool { return pidRe.MatchString(s) }

// CompareEdges orders edges by (From, PID, To), the order every backend
// lists a subgraph's edges in.
func CompareEdges(x, y Edge) int {
	return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.PID, y.PID), cmp.Compare(x.To, y.To))
}

// SortEdges sorts es in place by CompareEdges.
func SortEdges(es []Edge) { slices.SortFunc(es, CompareEdges) }

// CompareTriples orders triples by (Head, PID, Tail).
func CompareTriples(x, y Triple) int {
	return cmp.Or(cmp.Compare(x.Head, y.Head), cmp.Compare(x.PID, y.PID), cmp.Compare(x.Tail, y.Tail))
}
