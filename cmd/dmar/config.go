package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/dmar-kg/dmar/internal/config"
	"io"
	"log/slog"
	"os"
)

func init() {
	register("config check", "validate the configuration (--config FILE, DMAR_* env, flags) and name every wrong field", runConfigCheck)
	register("config hash-key", "read an API key on stdin and print the SHA-256 to put in server.auth.keys[].sha256", runConfigHashKey)
}

func runConfigCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := appFlags{serve: true}
	fs := a.flags("config check", stderr)
	show := fs.Bool("show", false, "print the resolved configuration (secrets redacted)")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *show {
		fmt.Fprint(stdout, a.cfg.Redacted())
	}
	fmt.Fprintln(stdout, "configuration OK")
	return nil
}

func runConfigHashKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return usageError{"config hash-key reads the key on stdin (never as an argument: it would stay in the shell history)"}
	}
	h, err := config.HashKey(os.Stdin)
	if errors.Is(err, config.ErrShortKey) {
		return usageError{"config hash-key: " + err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, h)
	return nil
}

// newLogger is dmar's structured JSON log on w at level.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by config
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
