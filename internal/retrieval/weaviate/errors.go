package weaviate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate/entities/models"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// unavailable classifies a failed call. The caller's own cancellation or
// deadline is returned as such (errors.Is(err, context.DeadlineExceeded));
// a request Weaviate rejected as malformed (4xx other than 408/429) is our
// bug and Internal; everything else — refused connections, timeouts, 5xx,
// GraphQL errors — is an outage: errs.Unavail, 503 with Retry-After.
func unavailable(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		// The client's errors do not unwrap, so ctx is the reliable witness.
		return fmt.Errorf("weaviate %s: %w (%v)", op, cerr, err)
	}
	var fe *fault.WeaviateClientError
	if errors.As(err, &fe) && fe.IsUnexpectedStatusCode && fe.StatusCode >= 400 && fe.StatusCode < 500 &&
		fe.StatusCode != http.StatusRequestTimeout && fe.StatusCode != http.StatusTooManyRequests {
		return errs.Wrap(errs.Internal, err, "weaviate %s was rejected (status %d)", op, fe.StatusCode)
	}
	return fmt.Errorf("weaviate %s: %w", op, errs.Unavail(err, "weaviate"))
}

// gqlError turns the errors of a GraphQL response (which come with a nil
// transport error) into one error.
func gqlError(list []*models.GraphQLError) error {
	if len(list) == 0 {
		return nil
	}
	msg := list[0].Message
	if len(list) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(list)-1)
	}
	return fmt.Errorf("graphql: %s", msg)
}

// transient reports whether a failed call is worth retrying: network
// errors, 5xx, 429 and 408 answers, and gRPC's Unavailable-like codes.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var fe *fault.WeaviateClientError
	if errors.As(err, &fe) {
		if fe.IsUnexpectedStatusCode {
			return fe.StatusCode >= 500 || fe.StatusCode == http.StatusTooManyRequests || fe.StatusCode == http.StatusRequestTimeout
		}
		return fe.DerivedFromError != nil && transient(fe.DerivedFromError)
	}
	if st, ok := status.FromError(err); ok {
		return grpcTransient(st.Code())
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

func grpcTransient(c codes.Code) bool {
	switch c {
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.DeadlineExceeded, codes.Internal:
		return true
	}
	return false
}

// retry runs f up to attempts times with exponential backoff while its error
// is transient and ctx is live.
func retry(ctx context.Context, attempts int, f func() error) error {
	wait := 200 * time.Millisecond
	var err error
	for i := 0; i < attempts; i++ {
		if err = f(); err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		if i == attempts-1 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
	return err
}

// isStatus reports whether err is Weaviate answering with HTTP status code.
func isStatus(err error, code int) bool {
	var fe *fault.WeaviateClientError
	return errors.As(err, &fe) && fe.IsUnexpectedStatusCode && fe.StatusCode == code
}
