package wikidata

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/loaders/internal/qidset"
)

// Entity is one dump line reduced to what dmar keeps.
type Entity struct {
	ID          string // Q…, P…, L… or M…
	Type        string // "item", "property", "lexeme", "mediainfo"
	Label       string // in the first preferred language that has one; "" if none
	Description string
	Aliases     []string // preferred languages in order, trimmed, de-duplicated, label excluded
	// Claims are the truthy statements whose value is an item: per property,
	// the preferred-rank statements if there are any, else the normal ones,
	// never deprecated ones (Wikidata's wdt: semantics). Sorted by PID, dump
	// order within a property, each (PID, QID) once.
	Claims []Claim
}

// keys records which keys an entity object had, for check.
type seenKeys struct{ id, typ bool }

// Claim is one truthy item-valued statement of an entity.
type Claim struct{ PID, QID string }

// Filter decides what ParseLine keeps of a line.
type Filter struct {
	// Languages in order of preference for labels, descriptions and aliases.
	// Empty means English only.
	Languages []string
	// Properties, when not nil, is the allow-list of statement properties.
	Properties map[string]bool
}

func (f *Filter) langs() []string {
	if f == nil || len(f.Languages) == 0 {
		return []string{"en"}
	}
	return f.Languages
}

func (f *Filter) allows(pid []byte) bool {
	if f == nil || f.Properties == nil {
		return true
	}
	return f.Properties[string(pid)]
}

var entityIDRe = regexp.MustCompile(`^[QPLM][1-9]\d*$`)

// ValidEntityID reports whether s is the id of a top-level Wikidata entity.
func ValidEntityID(s string) bool { return entityIDRe.MatchString(s) }

var typeOfPrefix = map[byte]string{'Q': "item", 'P': "property", 'L': "lexeme", 'M': "mediainfo"}

type candidate struct {
	qid  string
	rank string
}

// ParseLine parses one entity line of a dump: a JSON object, without the
// framing's trailing comma (StripFraming removes it).
func ParseLine(line []byte, f *Filter) (Entity, error) {
	s := &scanner{b: line}
	e, k, err := parseObject(s, f)
	if err != nil {
		return Entity{}, err
	}
	if s.peek() != 0 {
		return Entity{}, s.errf("trailing data after the entity")
	}
	if err := e.check(k); err != nil {
		return Entity{}, err
	}
	return e, nil
}

// check validates what parseObject read: a top-level entity id, and a type
// that is the id's.
func (e *Entity) check(k seenKeys) error {
	if !k.id || !ValidEntityID(e.ID) {
		return fmt.Errorf("missing or bad entity id %q", e.ID)
	}
	if e.ID[0] == 'Q' && !validItem(e.ID) {
		return fmt.Errorf("item id %q out of range", e.ID)
	}
	if !k.typ {
		return fmt.Errorf("entity %s: missing field \"type\"", e.ID)
	}
	if want := typeOfPrefix[e.ID[0]]; e.Type != want {
		return fmt.Errorf("entity %s: type %q does not match the id (want %q)", e.ID, e.Type, want)
	}
	return nil
}

// parseObject reads the entity object at s's position, leaving s just past
// it. The result is not validated (check does that).
func parseObject(s *scanner, f *Filter) (Entity, seenKeys, error) {
	langs := f.langs()
	var (
		e       Entity
		k       seenKeys
		labels  = make([]string, len(langs))
		descs   = make([]string, len(langs))
		aliases = make([][]string, len(langs))
		claims  map[string][]candidate
	)
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "id":
			v, err := s.str()
			e.ID, k.id = v, true
			return err
		case "type":
			v, err := s.str()
			e.Type, k.typ = v, true
			return err
		case "labels":
			clear(labels)
			return s.objectOrEmpty(languageSlots(s, langs, labels))
		case "descriptions":
			clear(descs)
			return s.objectOrEmpty(languageSlots(s, langs, descs))
		case "aliases":
			clear(aliases)
			return parseAliases(s, langs, aliases)
		case "claims":
			var err error
			claims, err = parseClaims(s, f)
			return err
		default:
			return s.skip()
		}
	})
	if err != nil {
		return Entity{}, k, err
	}
	e.Label = first(labels)
	e.Description = first(descs)
	e.Aliases = kg.CleanAliases(e.Label, aliases...)
	e.Claims = truthy(claims)
	return e, k, nil
}

// parseMonolingual reads {"language":…, "value":"…"} and returns value,
// and whether there was one.
func parseMonolingual(s *scanner) (string, bool, error) {
	var v string
	var ok bool
	err := s.object(func(k []byte) error {
		if string(k) != "value" {
			return s.skip()
		}
		x, err := s.str()
		v, ok = x, true
		return err
	})
	return v, ok, err
}

// languageSlots reads a labels or descriptions member: slot[i] gets the
// value in langs[i]; other languages are skipped.
func languageSlots(s *scanner, langs, slot []string) func([]byte) error {
	return func(k []byte) error {
		i := indexOf(langs, k)
		if i < 0 {
			return s.skip()
		}
		v, _, err := parseMonolingual(s)
		slot[i] = v
		return err
	}
}

// parseAliases reads the aliases object: aliases[i] gets the values in langs[i].
func parseAliases(s *scanner, langs []string, aliases [][]string) error {
	return s.objectOrEmpty(func(k []byte) error {
		i := indexOf(langs, k)
		if i < 0 {
			return s.skip()
		}
		aliases[i] = aliases[i][:0]
		return s.array(func() error {
			v, ok, err := parseMonolingual(s)
			if ok {
				aliases[i] = append(aliases[i], v)
			}
			return err
		})
	})
}

// parseClaims reads the claims object: per property f allows, the statements
// whose value is an item, with their ranks (truthy picks among them).
func parseClaims(s *scanner, f *Filter) (map[string][]candidate, error) {
	claims := map[string][]candidate{}
	err := s.objectOrEmpty(func(pid []byte) error {
		if !kg.ValidPID(string(pid)) || !f.allows(pid) {
			return s.skip()
		}
		var cs []candidate
		err := s.array(func() error {
			c, err := parseStatement(s)
			if c.qid != "" {
				cs = append(cs, c)
			}
			return err
		})
		claims[string(pid)] = cs
		return err
	})
	return claims, err
}

var errNotStatement = errors.New("statement is not an object")

// parseStatement reads one statement and returns its item value and rank;
// qid is "" when the main snak is not an item value.
func parseStatement(s *scanner) (candidate, error) {
	var (
		c        candidate
		snaktype string
		qid      string
	)
	if s.peek() != '{' {
		if s.peek() == 0 {
			return c, errTruncated
		}
		return c, errNotStatement
	}
	err := s.object(func(k []byte) error {
		switch string(k) {
		case "rank":
			v, err := s.str()
			c.rank = v
			return err
		case "mainsnak":
			snaktype, qid = "", ""
			return s.object(func(k []byte) error {
				switch string(k) {
				case "snaktype":
					v, err := s.str()
					snaktype = v
					return err
				case "datavalue":
					qid = ""
					return s.object(func(k []byte) error {
						if string(k) != "value" {
							return s.skip()
						}
						qid = ""
						if s.peek() != '{' {
							return s.skip()
						}
						return s.object(func(k []byte) error {
							if string(k) != "id" {
								return s.skip()
							}
							qid = ""
							if s.peek() != '"' {
								return s.skip()
							}
							v, err := s.str()
							qid = v
							return err
						})
					})
				default:
					return s.skip()
				}
			})
		default:
			return s.skip()
		}
	})
	if snaktype == "value" && validItem(qid) {
		c.qid = qid
	}
	return c, err
}

// validItem reports whether q is a QID whose number fits the flat sets.
func validItem(q string) bool {
	_, ok := qidset.Num(q)
	return ok
}

func indexOf(langs []string, k []byte) int {
	for i, l := range langs {
		if string(k) == l {
			return i
		}
	}
	return -1
}

func first(vs []string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func truthy(claims map[string][]candidate) []Claim {
	pids := make([]string, 0, len(claims))
	for p := range claims {
		pids = append(pids, p)
	}
	sort.Strings(pids)
	var out []Claim
	seen := map[Claim]bool{}
	for _, p := range pids {
		cs := claims[p]
		best := "normal"
		for _, c := range cs {
			if c.rank == "preferred" {
				best = "preferred"
				break
			}
		}
		for _, c := range cs {
			cl := Claim{PID: p, QID: c.qid}
			if c.rank != best || seen[cl] {
				continue
			}
			seen[cl] = true
			out = append(out, cl)
		}
	}
	return out
}

// StripFraming turns a dump line into the entity's JSON: it trims spaces and
// the trailing comma. It returns nil for the framing lines "[" and "]" and
// for blank lines.
func StripFraming(line []byte) []byte {
	line = bytes.TrimSpace(line)
	line = bytes.TrimSuffix(line, []byte(","))
	line = bytes.TrimSpace(line)
	switch string(line) {
	case "", "[", "]":
		return nil
	}
	return line
}
