package mentions

import "testing"

func TestFirstSentence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"One. Two.", "One."},
		{"A 2.5 m tall man. Next.", "A 2.5 m tall man."},
		{"No end", "No end"},
		{"Line\nbreak. More.", "Line"},
		{"Why? Because.", "Why?"},
	} {
		if got := FirstSentence(c.in); got != c.want {
			t.Errorf("FirstSentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := make([]byte, 0, 1000)
	for len(long) < 900 {
		long = append(long, "é"...)
	}
	if got := FirstSentence(string(long)); len(got) > SentenceMaxBytes || len(got) < SentenceMaxBytes-1 {
		t.Errorf("a long lead is %d bytes, want about %d", len(got), SentenceMaxBytes)
	}
}

func TestIDF(t *testing.T) {
	if IDF(0, 100) != 1 || IDF(100, 100) != 0 {
		t.Errorf("IDF ends: %v %v, want 1 and 0", IDF(0, 100), IDF(100, 100))
	}
	if !(IDF(1, 1000) > IDF(10, 1000) && IDF(10, 1000) > IDF(500, 1000)) {
		t.Error("IDF does not fall with the document frequency")
	}
	if IDF(3, 0) != 0 {
		t.Error("IDF of an empty index is not 0")
	}
}
