package errs

// MaxEcho is how many characters of a client's value an error message repeats.
const MaxEcho = 64

// Clip cuts s to at most n characters (runes), marking a cut with an
// ellipsis: a value a client sent is never echoed whole in a message or a
// log line, however long it is.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
