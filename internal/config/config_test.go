package config_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/dmar-kg/dmar/internal/config"
)

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func bundleDir(t *testing.T) string {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "triples.tsv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultsAreValid(t *testing.T) {
	c := config.Default(t.TempDir(), bundleDir(t))
	if ps := c.Validate(); len(ps) != 0 {
		t.Fatalf("defaults are invalid: %v", ps)
	}
	if c.Graph != "embedded" || c.Index != "embedded" || !strings.HasPrefix(c.Server.Addr, "127.0.0.1:") || c.Server.Pprof || len(c.Server.CORSOrigins) != 0 {
		t.Errorf("defaults must run the embedded backend on loopback with CORS and pprof off: %+v", c)
	}
}

// File, then environment: the environment wins where both set a field.
func TestFileThenEnv(t *testing.T) {
	c := config.Default(t.TempDir(), bundleDir(t))
	f := write(t, "dmar.yaml", "graph: neo4j://db:7687\nindex: weaviate://w:8080/Doc\nserver:\n  addr: 0.0.0.0:9000\n  request_timeout: 20s\nmodels:\n  doc_tokens: 64\n")
	if ps := config.File(&c, f); len(ps) != 0 {
		t.Fatal(ps)
	}
	if ps := config.Env(&c, envOf(map[string]string{"DMAR_ADDR": "127.0.0.1:7000", "DMAR_DOC_TOKENS": "32"})); len(ps) != 0 {
		t.Fatal(ps)
	}
	want := map[string]any{"graph": c.Graph, "index": c.Index, "addr": c.Server.Addr, "timeout": c.Server.RequestTimeout, "tokens": c.Models.DocTokens, "backend": c.Server.BackendTimeout}
	for k, v := range map[string]any{"graph": "neo4j://db:7687", "index": "weaviate://w:8080/Doc", "addr": "127.0.0.1:7000", "timeout": 20 * time.Second, "tokens": 32, "backend": 10 * time.Second} {
		if want[k] != v {
			t.Errorf("%s = %v, want %v", k, want[k], v)
		}
	}
}

func TestEveryWrongFieldIsNamed(t *testing.T) {
	c := config.Default(t.TempDir(), bundleDir(t))
	f := write(t, "bad.yaml", `graph: mysql://x
method: question-aware
neo4j:
  password: hunter2
server:
  addr: nope
  pprof: true
  pprof_addr: 0.0.0.0:6060
  log_level: loud
  cors_origins: ["javascript:alert(1)"]
  auth:
    keys:
      - {name: a, sha256: abc}
      - {name: a, sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, rate: -1}
  bogus: 1
models:
  doc_tokens: 1000
`)
	ps := config.File(&c, f)
	ps = append(ps, config.Env(&c, envOf(map[string]string{"DMAR_ORT_THREADS": "many", "DMAR_REQUEST_TIMEOUT": "soon"}))...)
	ps = append(ps, c.Validate()...)
	msg := ps.Error()
	for _, field := range []string{":4: \"password\": secrets are not read", ":15: unknown key \"bogus\"", "server.pprof_addr", "DMAR_ORT_THREADS", "DMAR_REQUEST_TIMEOUT",
		"graph:", "method:", "server.addr", "server.log_level", "server.cors_origins[0]", "server.auth.keys[0].sha256", "server.auth.keys[1].name", "server.auth.keys[1].rate", "models.doc_tokens"} {
		if !strings.Contains(msg, field) {
			t.Errorf("problems do not name %q:\n%s", field, msg)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("a problem repeats the secret:\n%s", msg)
	}
}

func TestSecretsFromEnvAndFiles(t *testing.T) {
	pw := write(t, "pw", "s3cret-from-file\n")
	for _, tc := range []struct {
		name string
		yaml string
		env  map[string]string
		want string
	}{
		{"env", "", map[string]string{"DMAR_NEO4J_PASSWORD": "s3cret-env"}, "s3cret-env"},
		{"env file", "", map[string]string{"DMAR_NEO4J_PASSWORD_FILE": pw}, "s3cret-from-file"},
		{"yaml file", "neo4j:\n  password_file: " + pw + "\n", nil, "s3cret-from-file"},
		{"env over file", "neo4j:\n  password_file: " + pw + "\n", map[string]string{"DMAR_NEO4J_PASSWORD": "s3cret-env"}, "s3cret-env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default(t.TempDir(), bundleDir(t))
			if tc.yaml != "" {
				if ps := config.File(&c, write(t, "c.yaml", tc.yaml)); len(ps) != 0 {
					t.Fatal(ps)
				}
			}
			if ps := config.Env(&c, envOf(tc.env)); len(ps) != 0 {
				t.Fatal(ps)
			}
			if c.Neo4j.Password.Reveal() != tc.want {
				t.Fatalf("password = %q, want %q", c.Neo4j.Password.Reveal(), tc.want)
			}
			assertNoSecret(t, c, tc.want)
		})
	}
	c := config.Default(t.TempDir(), bundleDir(t))
	ps := config.Env(&c, envOf(map[string]string{"DMAR_CHAT_API_KEY_FILE": "/nonexistent/key"}))
	if len(ps) != 1 || ps[0].Field != "DMAR_CHAT_API_KEY_FILE" {
		t.Errorf("an unreadable secret file: %v", ps)
	}
}

// assertNoSecret renders c every way a program might print or log it.
func assertNoSecret(t *testing.T, c config.Config, secret string) {
	t.Helper()
	var logs strings.Builder
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "cfg", c, "pw", c.Neo4j.Password)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "cfg", c, "pw", c.Neo4j.Password)
	js, _ := json.Marshal(c)
	ym, _ := yaml.Marshal(c)
	for name, out := range map[string]string{"slog": logs.String(), "json": string(js), "yaml": string(ym), "Redacted": c.Redacted(),
		"%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c), "%#v": fmt.Sprintf("%#v", c), "%s": fmt.Sprintf("%s", c.Neo4j.Password)} { //nolint:gocritic,staticcheck // the test is what %s prints {
		if strings.Contains(out, secret) {
			t.Errorf("%s output contains the secret: %s", name, out)
		}
	}
}

func TestSettingsHaveUniqueNames(t *testing.T) {
	var c config.Config
	seen := map[string]bool{}
	for _, s := range config.Settings(&c) {
		for _, n := range []string{"key:" + s.Key, "env:" + s.Env, "flag:" + s.Flag} {
			if n == "flag:" {
				continue
			}
			if seen[n] {
				t.Errorf("%s is used twice", n)
			}
			seen[n] = true
		}
		if !strings.HasPrefix(s.Env, "DMAR_") {
			t.Errorf("%s: env %q lacks the DMAR_ prefix", s.Key, s.Env)
		}
	}
}

// YAML's .nan and .inf are floats: a NaN rate compared false with every bound
// and ran unlimited. Two keys with one hash would give one key two names and
// limits. Both are refused, naming the field.
func TestKeyRatesAreFiniteAndHashesUnique(t *testing.T) {
	const h = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for _, tc := range []struct{ name, keys, want string }{
		{"nan", "[{name: a, sha256: " + h + ", rate: .nan}]", "server.auth.keys[0].rate"},
		{"inf", "[{name: a, sha256: " + h + ", rate: .inf}]", "server.auth.keys[0].rate"},
		{"minus inf", "[{name: a, sha256: " + h + ", rate: -.inf}]", "server.auth.keys[0].rate"},
		{"same hash", "[{name: a, sha256: " + h + "}, {name: b, sha256: " + h + "}]", "server.auth.keys[1].sha256: is the same key as server.auth.keys[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default(t.TempDir(), bundleDir(t))
			if ps := config.File(&c, write(t, "c.yaml", "server:\n  auth:\n    keys: "+tc.keys+"\n")); len(ps) != 0 {
				t.Fatal(ps)
			}
			ps := c.Validate()
			if !strings.Contains(ps.Error(), tc.want) {
				t.Fatalf("problems %q do not name %q", ps.Error(), tc.want)
			}
		})
	}
}

// encoder_dir left at the default encoder's folder follows models.encoder;
// set elsewhere it is used as given.
func TestEncoderFolderFollowsTheEncoder(t *testing.T) {
	c := config.Default("/c", "")
	if c.Models.Encoder != config.DefaultEncoder || c.Models.EncoderFolder() != "/c/models/bge-small-en-v1.5-int8" {
		t.Fatalf("default: %q %q", c.Models.Encoder, c.Models.EncoderFolder())
	}
	c.Models.Encoder = "bge-small-en-v1.5"
	if got := c.Models.EncoderFolder(); got != "/c/models/bge-small-en-v1.5" {
		t.Errorf("follows: %q", got)
	}
	c.Models.EncoderDir = "/opt/bge"
	if got := c.Models.EncoderFolder(); got != "/opt/bge" {
		t.Errorf("explicit: %q", got)
	}
	if err := config.Env(&c, func(k string) string { return map[string]string{"DMAR_ENCODER": "e5-small-v2-int8"}[k] }).Err(); err != nil || c.Models.Encoder != "e5-small-v2-int8" {
		t.Errorf("DMAR_ENCODER: %q %v", c.Models.Encoder, err)
	}
}

// The batching window is a serve setting from 0 (off) to 100ms; the
// variable sets it and a value outside the range is named.
func TestEncoderBatchWindow(t *testing.T) {
	for v, bad := range map[string]bool{"0": false, "5ms": false, "100ms": false, "101ms": true, "-1ms": true} {
		c := config.Default(t.TempDir(), bundleDir(t))
		ps := config.Env(&c, envOf(map[string]string{"DMAR_ENCODER_BATCH_WINDOW": v}))
		ps = append(ps, c.Validate()...)
		named := strings.Contains(ps.Error(), "server.encoder_batch_window")
		if named != bad {
			t.Errorf("%s: problems %q", v, ps.Error())
		}
		if !bad && c.Server.EncoderBatchWindow.String() != map[string]string{"0": "0s", "5ms": "5ms", "100ms": "100ms"}[v] {
			t.Errorf("%s read as %s", v, c.Server.EncoderBatchWindow)
		}
	}
}

// embedded.compact_vectors and embedded.vector_dir come from the file, the
// environment and the flags, the flags last.
func TestCompactVectorsSettings(t *testing.T) {
	c := config.Default(t.TempDir(), bundleDir(t))
	if c.Embedded.CompactVectors || c.Embedded.VectorDir != "" {
		t.Fatalf("default: %+v, want off", c.Embedded)
	}
	f := write(t, "dmar.yaml", "embedded:\n  compact_vectors: true\n  vector_dir: /var/lib/dmar/vectors\n")
	if ps := config.File(&c, f); len(ps) != 0 {
		t.Fatal(ps)
	}
	if !c.Embedded.CompactVectors || c.Embedded.VectorDir != "/var/lib/dmar/vectors" {
		t.Fatalf("file: %+v", c.Embedded)
	}
	if ps := config.Env(&c, envOf(map[string]string{"DMAR_COMPACT_VECTORS": "false", "DMAR_VECTOR_DIR": "/srv/v"})); len(ps) != 0 {
		t.Fatal(ps)
	}
	if c.Embedded.CompactVectors || c.Embedded.VectorDir != "/srv/v" {
		t.Fatalf("env: %+v", c.Embedded)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config.Register(fs, &c, true)
	if err := fs.Parse([]string{"--compact-vectors", "--vector-dir", "/tmp/v"}); err != nil {
		t.Fatal(err)
	}
	if !c.Embedded.CompactVectors || c.Embedded.VectorDir != "/tmp/v" {
		t.Fatalf("flags: %+v", c.Embedded)
	}
	if ps := config.Env(&c, envOf(map[string]string{"DMAR_COMPACT_VECTORS": "sometimes"})); len(ps) == 0 {
		t.Error("DMAR_COMPACT_VECTORS=sometimes was accepted")
	}
}
