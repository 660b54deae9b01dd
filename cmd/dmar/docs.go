package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/api"
)

func init() {
	register("docs put", "add or replace documents on a running dmar serve from a JSONL file ({id, title, text, metadata?} a line; - for stdin)", runDocsPut)
	register("docs get", "print a stored document with its entity links", runDocsGet)
	register("docs delete", "delete documents by id (all or nothing)", runDocsDelete)
}

// docsClient parses the flags every docs subcommand shares.
func docsClient(name string, args []string, stderr io.Writer, more func(*flag.FlagSet)) (*api.Client, *flag.FlagSet, error) {
	fs := newFlagSet(name, stderr)
	base := fs.String("url", api.DefaultURL, "the server's base URL (API key: env DMAR_API_KEY)")
	if more != nil {
		more(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, flagErr(err)
	}
	c, err := apiClient("", *base, 0)
	return c, fs, err
}

func runDocsPut(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	batch := 64
	c, fs, err := docsClient("docs put", args, stderr, func(fs *flag.FlagSet) {
		fs.IntVar(&batch, "batch", batch, "documents per request (at most 256)")
	})
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{Msg: "docs put: give one JSONL file (or -)"}
	}
	return api.PutDocumentsFile(ctx, c, fs.Arg(0), os.Stdin, batch, stdout)
}

func runDocsGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, fs, err := docsClient("docs get", args, stderr, nil)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{Msg: "docs get: give one document id"}
	}
	d, err := c.Document(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	return api.WriteJSON(stdout, d)
}

func runDocsDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, fs, err := docsClient("docs delete", args, stderr, nil)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{Msg: "docs delete: give at least one document id"}
	}
	res, err := c.DeleteDocuments(ctx, fs.Args())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "deleted %d\n", res.Deleted)
	return nil
}
