package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A two-word command runs with the rest of the arguments; a group's first
// word alone, or with a word that is none of its commands, is a usage
// error naming the group's commands; any other word is unknown.
func TestRunDispatchesAndNamesGroups(t *testing.T) {
	var c Commands
	var got []string
	rec := func(name string) Func {
		return func(_ context.Context, args []string, _, _ io.Writer) error {
			got = append(got, name+":"+strings.Join(args, ","))
			return nil
		}
	}
	c.Register("bench load", "", rec("load"))
	c.Register("bench docs", "", rec("docs"))
	c.Register("serve", "", rec("serve"))
	ctx := context.Background()
	if err := c.Run(ctx, []string{"bench", "load", "--x", "1"}, io.Discard, io.Discard); err != nil || strings.Join(got, ";") != "load:--x,1" {
		t.Fatalf("bench load: %v, ran %v", err, got)
	}
	if err := c.Run(ctx, []string{"serve", "bench"}, io.Discard, io.Discard); err != nil || got[1] != "serve:bench" {
		t.Fatalf("serve: %v, ran %v", err, got)
	}
	for args, want := range map[string]string{
		"bench":     "bench needs a subcommand: one of docs, load",
		"bench foo": `bench has no subcommand "foo": one of docs, load`,
		"nope":      `unknown command "nope"`,
	} {
		err := c.Run(ctx, strings.Fields(args), io.Discard, io.Discard)
		var ue UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a usage error with %q", args, err, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("a refused command ran: %v", got)
	}
}
