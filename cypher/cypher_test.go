package cypher

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadEmbedded(t *testing.T) {
	s, ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names {
		q := s.Get(n)
		if !strings.Contains(q, "RETURN") && !strings.Contains(q, "MERGE") && !strings.Contains(q, "SET") && !strings.Contains(q, "DELETE") {
			t.Errorf("query %s neither returns nor writes", n)
		}
	}
	if len(ms) == 0 || ms[0].N != 1 || ms[0].Name != "entity_qid_unique" {
		t.Fatalf("first migration = %+v", ms[:1])
	}
}

func TestLoadFailures(t *testing.T) {
	ok := func() fstest.MapFS {
		return fstest.MapFS{
			"a.cypher":                  {Data: []byte("RETURN 1")},
			"migrations/001_x.cypher":   {Data: []byte("CREATE INDEX x IF NOT EXISTS FOR (n:X) ON (n.x)")},
			"migrations/002_y_z.cypher": {Data: []byte("CREATE INDEX y IF NOT EXISTS FOR (n:Y) ON (n.y)")},
		}
	}
	cases := []struct {
		name  string
		edit  func(fstest.MapFS)
		names []string
		want  string // substring of the error; "" for success
	}{
		{"all there", func(fstest.MapFS) {}, []string{"a"}, ""},
		{"missing query", func(fstest.MapFS) {}, []string{"a", "b"}, `query "b"`},
		{"empty query", func(m fstest.MapFS) { m["a.cypher"] = &fstest.MapFile{Data: []byte(" \n")} }, []string{"a"}, "empty"},
		{"gap", func(m fstest.MapFS) { delete(m, "migrations/001_x.cypher") }, []string{"a"}, "numbered"},
		{"repeat", func(m fstest.MapFS) { m["migrations/002_again.cypher"] = &fstest.MapFile{Data: []byte("x")} }, []string{"a"}, "numbered"},
		{"bad name", func(m fstest.MapFS) { m["migrations/3_z.cypher"] = &fstest.MapFile{Data: []byte("x")} }, []string{"a"}, "NNN_name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := ok()
			c.edit(fs)
			_, ms, err := load(fs, c.names)
			if c.want == "" {
				if err != nil || len(ms) != 2 || ms[1].Name != "y_z" {
					t.Fatalf("load = %v, %+v", err, ms)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}
