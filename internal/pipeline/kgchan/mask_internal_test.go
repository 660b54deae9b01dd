package kgchan

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

func TestMaskMentions(t *testing.T) {
	q := "who is the spouse of barack obama and michelle?"
	for _, c := range []struct {
		name string
		ms   []kg.Mention
		want string
	}{
		{"none", nil, q},
		{"by offsets", []kg.Mention{{Surface: "barack obama", Start: 21, End: 33}}, "who is the spouse of and michelle?"},
		{"wrong offsets: by surface", []kg.Mention{{Surface: "michelle", Start: 0, End: 3}}, "who is the spouse of barack obama and ?"},
		{"overlapping", []kg.Mention{{Surface: "barack obama", Start: 21, End: 33}, {Surface: "obama", Start: 28, End: 33}, {Surface: "spouse", Start: 11, End: 17}}, "who is the of and michelle?"},
		{"surface absent", []kg.Mention{{Surface: "Obama", Start: -1, End: -1}}, q},
		{"only a mention left", []kg.Mention{{Surface: q[:len(q)-1], Start: 0, End: len(q) - 1}}, ""},
	} {
		if got := MaskMentions(q, c.ms); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
