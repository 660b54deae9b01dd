package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func init() {
	register("version", "print the version", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		rev := ""
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					rev = " (" + s.Value + ")"
				}
			}
		}
		fmt.Fprintf(stdout, "dmar %s%s\n", version, rev)
		return nil
	})
}
