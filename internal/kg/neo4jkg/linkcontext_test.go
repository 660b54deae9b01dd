package neo4jkg

import (
	"reflect"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

// TestCandidateDictionaries reads link_context's rows without a Neo4j: only
// wanted forms, each candidate once per form, no derived candidate for a
// form some entity has exactly, each form's candidates in QID order.
func TestCandidateDictionaries(t *testing.T) {
	exactRows := []any{
		[]any{"Q2", "Nolan", []any{"nolan", "nolan", "unasked"}, int64(5)},
		[]any{"Q1", "Christopher Nolan", []any{"nolan", "christopher nolan"}, int64(9)},
	}
	derivedRows := []any{
		[]any{"Q3", []any{"nolan", "c. nolan"}, int64(1)},
		[]any{"Q3", []any{"c. nolan"}, int64(1)},
	}
	want := map[string]bool{"nolan": true, "c. nolan": true}
	exact, derived := candidateDictionaries(exactRows, derivedRows, want)
	wantExact := kg.Dictionary{"nolan": {{QID: "Q1", Degree: 9}, {QID: "Q2", IsLabel: true, Degree: 5}}}
	wantDerived := kg.Dictionary{"c. nolan": {{QID: "Q3", Degree: 1, Derived: true}}}
	if !reflect.DeepEqual(exact, wantExact) {
		t.Errorf("exact %+v, want %+v", exact, wantExact)
	}
	if !reflect.DeepEqual(derived, wantDerived) {
		t.Errorf("derived %+v, want %+v", derived, wantDerived)
	}
}
