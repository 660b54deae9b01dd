package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func init() {
	register("version", "print the version", func(_ context.Context, _ []string, stdout, _ io.Writer) error {
		fmt.Fprintln(stdout, cli.Version(version))
		return nil
	})
}
