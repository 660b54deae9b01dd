package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
)

func init() {
	register("config check", "validate the configuration (--config FILE, DMAR_* env, flags) and name every wrong field", runConfigCheck)
	register("config hash-key", "read an API key on stdin and print the SHA-256 to put in server.auth.keys[].sha256", runConfigHashKey)
}

func runConfigCheck(_ context.Context, args []string, stdout, stderr io.Writer) error {
	a := appFlags{serve: true}
	var show bool
	if _, err := a.parseArgs("config check", args, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&show, "show", false, "print the resolved configuration (secrets redacted)")
	}); err != nil {
		return err
	}
	if show {
		fmt.Fprint(stdout, a.cfg.Redacted())
	}
	fmt.Fprintln(stdout, "configuration OK")
	return nil
}

func runConfigHashKey(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		return usageError{Msg: "config hash-key reads the key on stdin (never as an argument: it would stay in the shell history)"}
	}
	h, err := config.HashKey(os.Stdin)
	if errors.Is(err, config.ErrShortKey) {
		return usageError{Msg: "config hash-key: " + err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, h)
	return nil
}
