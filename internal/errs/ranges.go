package errs

// The range checks of options: each names the field it refuses, with the
// value it got, as the API's 400 message.

// IntIn refuses v outside [lo, hi].
func IntIn(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return Field(name, "must be between %d and %d, got %d", lo, hi, v)
	}
	return nil
}

// Unit refuses v outside [0, 1] (NaN too).
func Unit(name string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return Field(name, "must be between 0 and 1, got %v", v)
	}
	return nil
}

// Within refuses v outside [lo, hi] (NaN too).
func Within(name string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) {
		return Field(name, "must be between %v and %v, got %v", lo, hi, v)
	}
	return nil
}

// OneOf refuses v unless it is one of allowed.
func OneOf(name, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return Field(name, "must be one of %v, got %q", allowed, Clip(v, MaxEcho))
}

// OptionalOneOf is OneOf where "" (unset) is allowed too.
func OptionalOneOf(name, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	return OneOf(name, v, allowed...)
}
