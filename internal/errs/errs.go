// Package errs holds dmar's one error type. Every layer returns plain wrapped
// errors; the ones a client should see carry an *Error with a Code, and the
// HTTP layer maps codes to statuses in one table (see Status).
package errs

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code classifies an error for clients.
type Code string

const (
	Invalid       Code = "invalid_argument"       // 400: malformed request, unknown option
	NotFound      Code = "not_found"              // 404
	TooLarge      Code = "payload_too_large"      // 413
	Unprocessable Code = "unprocessable"          // 422: well-formed but semantically wrong (k > p)
	RateLimited   Code = "rate_limited"           // 429
	Unauthorized  Code = "unauthorized"           // 401
	Forbidden     Code = "forbidden"              // 403: a Host the server does not answer
	BadMethod     Code = "method_not_allowed"     // 405: the path exists, the method does not (see Allow)
	BadMediaType  Code = "unsupported_media_type" // 415: a request body that is not declared application/json
	Internal      Code = "internal"               // 500
	Unavailable   Code = "unavailable"            // 503: a backend is down
)

// Error is an error a client may see. Message must be safe to show.
type Error struct {
	Code    Code
	Message string
	// Field names the request field that was wrong, when there is one.
	Field string
	// RetryAfter is sent as Retry-After for 429 and 503.
	RetryAfter time.Duration
	Err        error // the cause, logged but not shown
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an *Error.
func E(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Field builds an Invalid error naming a request field.
func Field(field, format string, args ...any) *Error {
	return &Error{Code: Invalid, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// Wrap gives err a client-visible code and message.
func Wrap(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// Unavail marks err as a backend outage: clients get 503 and Retry-After.
func Unavail(err error, backend string) *Error {
	return &Error{Code: Unavailable, Message: backend + " is unavailable", Err: err, RetryAfter: 5 * time.Second}
}

// CodeOf returns the code of the first *Error in err's chain, Internal if none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// As returns the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

var statuses = map[Code]int{
	Invalid:       http.StatusBadRequest,
	Unauthorized:  http.StatusUnauthorized,
	NotFound:      http.StatusNotFound,
	Forbidden:     http.StatusForbidden,
	BadMethod:     http.StatusMethodNotAllowed,
	BadMediaType:  http.StatusUnsupportedMediaType,
	TooLarge:      http.StatusRequestEntityTooLarge,
	Unprocessable: http.StatusUnprocessableEntity,
	RateLimited:   http.StatusTooManyRequests,
	Internal:      http.StatusInternalServerError,
	Unavailable:   http.StatusServiceUnavailable,
}

// Status is the one mapping from codes to HTTP statuses.
func Status(c Code) int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}
