package main

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/docstore"
)

func init() {
	register("docs repair", "rebuild a damaged document log from every intact record, keeping the damaged file (stop dmar serve first; docs/durability.md)", runDocsRepair)
}

func runDocsRepair(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("docs repair", stderr)
	state := fs.String("state", "", "the state folder dmar serve uses (--state, DMAR_STATE); or a folder holding a documents.log (required)")
	dryRun := fs.Bool("dry-run", false, "only report what a repair would keep and lose")
	asJSON := fs.Bool("json", false, "one JSON object a log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *state == "" {
		return usageError{Msg: "docs repair: --state DIR is required"}
	}
	reports, err := docstore.RepairState(*state, *dryRun)
	if werr := docstore.WriteRepairReports(stdout, reports, *asJSON); err == nil {
		err = werr
	}
	return err
}
