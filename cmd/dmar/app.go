package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/cli"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// appFlags are the settings every data-using subcommand shares, resolved
// from one configuration model (internal/config): defaults, then the YAML
// file (--config or DMAR_CONFIG), then DMAR_* variables, then flags. cfg is
// the one source of truth; subcommands read it and open what it names
// through internal/backends.
type appFlags struct {
	cfg        config.Config
	configFile string
	serve      bool // register dmar serve's flags too
}

// defaultConfig is the built-in configuration: the embedded backend over
// ../shared/data/codexm-film, models where scripts/setup.sh puts them.
func defaultConfig() config.Config {
	data := ""
	if d, err := datapath.Dataset("codexm-film"); err == nil {
		data = d
	}
	return config.Default(config.CacheDir(os.Getenv), data)
}

// register adds --config and a flag for every setting that has one.
func (a *appFlags) register(fs *flag.FlagSet) {
	a.cfg = defaultConfig()
	fs.StringVar(&a.configFile, "config", "", "YAML configuration file (env DMAR_CONFIG); flags > DMAR_* env > file > defaults")
	config.Register(fs, &a.cfg, a.serve)
}

// parseArgs parses args into a flag set named name that holds the shared
// settings and what each of more registers (flags, then parse).
func (a *appFlags) parseArgs(name string, args []string, stderr io.Writer, more ...func(*flag.FlagSet)) (*flag.FlagSet, error) {
	fs := a.flags(name, stderr, more...)
	return fs, a.parse(fs, args)
}

// flags is the flag set of a data-using subcommand: the shared settings and
// what each of more registers.
func (a *appFlags) flags(name string, stderr io.Writer, more ...func(*flag.FlagSet)) *flag.FlagSet {
	fs := newFlagSet(name, stderr)
	a.register(fs)
	for _, m := range more {
		m(fs)
	}
	return fs
}

// parse parses the flags, then resolves the configuration in order of
// precedence and validates it, reporting every wrong field at once.
func (a *appFlags) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	return a.resolve(fs, os.Getenv)
}

func (a *appFlags) resolve(fs *flag.FlagSet, getenv func(string) string) error {
	return config.Resolve(&a.cfg, defaultConfig(), fs, a.configFile, getenv)
}

// pipelineFor opens the configured backends and models and wires a
// pipeline over them; the caller closes the set.
func (a *appFlags) pipelineFor(ctx context.Context, stderr io.Writer, log *slog.Logger, metrics pipeline.Metrics) (*pipeline.Pipeline, *backends.Set, error) {
	return backends.OpenPipeline(ctx, a.cfg, stderr, log, metrics, a.serve)
}

var (
	warnLogger = cli.WarnLogger
	newLogger  = cli.Logger
)
