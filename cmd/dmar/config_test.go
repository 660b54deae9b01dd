package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// Flags beat DMAR_* variables, which beat the file, which beats defaults.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "triples.tsv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "dmar.yaml")
	yaml := "data: " + dir + "\nserver:\n  addr: 127.0.0.1:1001\n  request_timeout: 11s\n  backend_timeout: 3s\n  log_level: warn\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DMAR_CONFIG": file, "DMAR_ADDR": "127.0.0.1:1002", "DMAR_REQUEST_TIMEOUT": "12s"}
	a := appFlags{serve: true}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	a.register(fs)
	if err := fs.Parse([]string{"--addr", "127.0.0.1:1003"}); err != nil {
		t.Fatal(err)
	}
	if err := a.resolve(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	s := a.cfg.Server
	got := []string{s.Addr, s.RequestTimeout.String(), s.BackendTimeout.String(), s.LogLevel, s.ShutdownTimeout.String()}
	want := []string{"127.0.0.1:1003", "12s", "3s", "warn", "15s"} // flag, env, file, file, default
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("resolved %v, want %v", got, want)
	}
}

// dmar serve refuses an invalid configuration with config check's messages.
func TestServeRefusesInvalidConfig(t *testing.T) {
	args := []string{"--addr", "nope", "--log-level", "loud", "--data", t.TempDir()}
	var out1, out2 bytes.Buffer
	err1 := Run(context.Background(), append([]string{"config", "check"}, args...), &out1, &out1)
	err2 := Run(context.Background(), append([]string{"serve"}, args...), &out2, &out2)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("config check: %v\nserve: %v", err1, err2)
	}
	for _, f := range []string{"server.addr", "server.log_level", "data"} {
		if !strings.Contains(err1.Error(), f) {
			t.Errorf("%q not named in %v", f, err1)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// The configuration and the pipeline know the same methods, the default
// first, and the configured method is what a request starts from.
func TestConfigMethodsArePipelines(t *testing.T) {
	if !slices.Equal(config.Methods, pipeline.Methods) {
		t.Fatalf("config.Methods %v, pipeline.Methods %v", config.Methods, pipeline.Methods)
	}
	if d := config.Default(t.TempDir(), t.TempDir()); d.Method != pipeline.MethodDMAR {
		t.Errorf("default method %q, want %q", d.Method, pipeline.MethodDMAR)
	}
}
