package cli

import (
	"io"
	"log/slog"
	"runtime/debug"
)

// Logger is dmar's structured JSON log on w at level (validated by config;
// an unknown one logs at info).
func Logger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// WarnLogger is the text log of the subcommands that are not servers.
func WarnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Version is "dmar VERSION", with the VCS revision the binary was built
// from when the build recorded one.
func Version(version string) string {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " (" + s.Value + ")"
			}
		}
	}
	return "dmar " + version + rev
}
