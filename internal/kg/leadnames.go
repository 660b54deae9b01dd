package kg

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LeadNamesVersion names the rules of LeadNames; a snapshot built under
// other rules is stale.
const LeadNamesVersion = "lead-names-2"

// leadWindow is how much of a document's opening LeadNames reads: the lead
// sentence, where Wikipedia states the names a subject goes by.
const leadWindow = 400

// leadTrigger matches the phrases that introduce another name of the
// subject: "known professionally as Antonio Banderas", "better known by
// his stage name Flying Lotus", "(formerly Lil Boosie)", "also called".
// A birth name ("born Marilyn Louis") is left out: questions rarely use it,
// and its surname and initial forms ("m. louis") would catch other names.
var leadTrigger = regexp.MustCompile(`(?i)\b(?:(?:(?:better|also|commonly|popularly|professionally|mononymously|simply|widely)\s+)?known\s+(?:(?:professionally|mononymously|simply|popularly|affectionately)\s+)?(?:as|by\s+(?:his|her|their|the)\s+(?:(?:stage|pen|ring|professional)\s+)?(?:name|pseudonym|nickname))|(?:stage|pen|ring)\s+name|also\s+called|nicknamed|formerly)\s+`)

// nameJoiners may sit inside a name ("Ludwig van Beethoven", "Gabriel García
// Márquez de la Concordia"); a name never ends on one.
var nameJoiners = map[string]bool{"de": true, "la": true, "le": true, "del": true, "della": true, "da": true, "di": true, "do": true, "dos": true, "das": true, "van": true, "von": true, "der": true, "den": true, "ten": true, "ter": true, "bin": true, "ibn": true, "al": true, "el": true, "y": true, "of": true, "and": true, "&": true}

// dateWords open a date, not a name ("known as of November 1982", "c. 1900").
var dateWords = map[string]bool{"january": true, "february": true, "march": true, "april": true, "may": true, "june": true, "july": true, "august": true, "september": true, "october": true, "november": true, "december": true, "c": true, "circa": true}

// orFillers may follow the "or" between two names: "Boosie Badazz or simply
// Boosie", "Flying Lotus or sometimes FlyLo".
var orFillers = []string{"simply ", "sometimes ", "just ", "more simply ", "occasionally "}

// LeadNames are the other names an entity's own document gives it in its
// lead ("José Antonio Domínguez Bandera (born 10 August 1960), known
// professionally as Antonio Banderas, ..." -> "Antonio Banderas"): a run of
// capitalised words after a naming phrase, and each name of "X or simply
// Y". They are read from prose, so they can be wrong ("known as Byzantium"
// is a former name; a run that starts with a month is a date, no name): the
// context linker uses them as derived forms, which only a confident,
// context-checked link accepts, never as exact ones.
func LeadNames(text string) []string {
	if len(text) > leadWindow {
		cut := leadWindow
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	var out []string
	seen := map[string]bool{}
	for _, loc := range leadTrigger.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && text[loc[0]-1] == '-' {
			continue // "Detroit-born Motown Records": no name of the subject
		}
		rest := text[loc[1]:]
		for {
			name, n := leadName(rest)
			if name == "" {
				break
			}
			if k := NormalizeForm(name); k != "" && !seen[k] {
				seen[k] = true
				out = append(out, name)
			}
			alt, ok := cutPrefixFold(strings.TrimLeft(rest[n:], " "), "or ")
			if !ok {
				break
			}
			for _, w := range orFillers {
				if a, ok := cutPrefixFold(alt, w); ok {
					alt = a
					break
				}
			}
			rest = alt
		}
	}
	return out
}

// leadName reads the name that opens s (after an optional quote): words
// that start with an upper-case letter, joined by spaces, hyphens or
// apostrophes, with joiners inside; it stops at any other word or at
// punctuation. n is how many bytes of s it read.
func leadName(s string) (name string, n int) {
	i := len(s) - len(strings.TrimLeft(s, "\"'“‘«"))
	start, end := i, i
	words := 0
	for i < len(s) {
		j := i
		for j < len(s) {
			r, sz := utf8.DecodeRuneInString(s[j:])
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '-' || r == '\'' || r == '’' || r == '.' || r == '&') {
				break
			}
			j += sz
		}
		w := strings.TrimRight(s[i:j], ".")
		if w == "" {
			break
		}
		first, _ := utf8.DecodeRuneInString(w)
		switch {
		case unicode.IsUpper(first):
			if words == 0 && dateWords[strings.ToLower(w)] {
				return "", 0
			}
			words++
			end = i + len(w)
			if w != s[i:j] { // a period
				if len(w) > 2 {
					j = len(s) // the sentence ends: "Nyasaland. It"
				} else {
					end = j // an initial: "J. R. R. Tolkien", "Jr."
				}
			}
		case nameJoiners[strings.ToLower(w)] && words > 0:
		default:
			j = len(s) // stop
		}
		if j >= len(s) || s[j] != ' ' {
			break
		}
		i = j + 1
	}
	if words == 0 {
		return "", 0
	}
	name = strings.TrimSpace(s[start:end])
	if r, _ := utf8.DecodeRuneInString(name); !unicode.IsLetter(r) || len(Tokenize(name)) > 6 {
		return "", 0
	}
	return name, end
}

// cutPrefixFold is s after prefix, matched regardless of case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}
