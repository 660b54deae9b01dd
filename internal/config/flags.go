package config

import (
	"flag"
	"fmt"
)

// Register adds a flag to fs for every setting of c that has one (dmar
// serve's own only with serve), bound to c's fields.
func Register(fs *flag.FlagSet, c *Config, serve bool) {
	for _, s := range Settings(c) {
		if s.Flag == "" || (s.Serve && !serve) {
			continue
		}
		fs.Var(s.Value, s.Flag, fmt.Sprintf("%s (env %s, %s in the file)", s.Usage, s.Env, s.Key))
	}
}

// Resolve rebuilds *c in order of precedence: def, then the YAML file
// (file, else DMAR_CONFIG), then the DMAR_* variables (through getenv), then
// the setting flags given on fs's command line again, so that they win. It
// validates the result and reports every wrong field at once. fs holds c's
// flags (Register); flags that are no setting are left alone.
func Resolve(c *Config, def Config, fs *flag.FlagSet, file string, getenv func(string) string) error {
	given := map[string]string{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	*c = def
	var ps Problems
	if file == "" {
		file = getenv("DMAR_CONFIG")
	}
	if file != "" {
		ps = append(ps, File(c, file)...)
	}
	ps = append(ps, Env(c, getenv)...)
	settings := map[string]bool{}
	for _, s := range Settings(c) {
		settings[s.Flag] = s.Flag != ""
	}
	for name, v := range given {
		if !settings[name] || fs.Lookup(name) == nil {
			continue // a subcommand's own flag, not a setting
		}
		if err := fs.Set(name, v); err != nil {
			ps = append(ps, Problem{Field: "--" + name, Msg: err.Error()})
		}
	}
	ps = append(ps, c.Validate()...)
	return ps.Err()
}
