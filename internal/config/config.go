// Package config is dmar's one configuration model, shared by every
// subcommand: built-in defaults (the embedded backend), a YAML file, DMAR_*
// environment variables and flags, each overriding the one before. Secrets
// (passwords, API keys) come only from the environment or from files named
// in the configuration; they are held as Secret, which never prints.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is everything a dmar process can be told.
type Config struct {
	Data   string `yaml:"data"`   // folder with a KG bundle and corpus.jsonl
	KG     string `yaml:"kg"`     // KG bundle folder, when not Data
	Corpus string `yaml:"corpus"` // corpus JSONL, when not Data/corpus.jsonl
	State  string `yaml:"state"`  // loaded graphs and indexes, keyed by content
	Graph  string `yaml:"graph"`  // "embedded" or neo4j://HOST:PORT
	Index  string `yaml:"index"`  // "embedded" or weaviate://HOST:PORT/Class
	// Method is the method requests start from: dmar (question-aware) or
	// paper (DMAR-SPEC.md's); a request's method option overrides it.
	Method   string   `yaml:"method"`
	Neo4j    Neo4j    `yaml:"neo4j"`
	Weaviate Weaviate `yaml:"weaviate"`
	Models   Models   `yaml:"models"`
	ORT      ORT      `yaml:"ort"`
	Chat     Chat     `yaml:"chat"`
	Server   Server   `yaml:"server"`
	Quiet    bool     `yaml:"quiet"`
}

// Neo4j holds the graph backend's credentials. The password comes from
// DMAR_NEO4J_PASSWORD, DMAR_NEO4J_PASSWORD_FILE or password_file.
type Neo4j struct {
	User         string `yaml:"user"`
	Database     string `yaml:"database"`
	PasswordFile string `yaml:"password_file"`
	Password     Secret `yaml:"-"`
}

// Weaviate holds the search backend's API key (DMAR_WEAVIATE_API_KEY,
// DMAR_WEAVIATE_API_KEY_FILE or api_key_file).
type Weaviate struct {
	APIKeyFile string `yaml:"api_key_file"`
	APIKey     Secret `yaml:"-"`
}

// Models are the ONNX model files.
type Models struct {
	Encoder      string `yaml:"encoder"` // a name of the encoder registry (internal/scoring/onnx/registry.go)
	EncoderDir   string `yaml:"encoder_dir"`
	EncoderBatch int    `yaml:"encoder_batch"` // texts per encoder call
	// RelationEncoder is the registry name of the encoder path relevance
	// matches questions to relation texts with; empty: Encoder.
	RelationEncoder string `yaml:"relation_encoder"`
	GNN             string `yaml:"gnn"`      // empty: the GED heuristic
	Gate            string `yaml:"gate"`     // empty: fixed weights
	RelPrior        string `yaml:"relprior"` // question -> relation prior; empty: off
	EvidenceGate    string `yaml:"evgate"`   // evidence-aware gate (option gate=evidence); empty: off
	DocTokens       int    `yaml:"doc_tokens"`
}

// ORT configures ONNX Runtime.
type ORT struct {
	Lib        string `yaml:"lib"`
	Device     string `yaml:"device"`      // cpu or cuda
	Threads    int    `yaml:"threads"`     // intra-op threads, 0 = its choice
	CUDADevice int    `yaml:"cuda_device"` // with device cuda
	CUDATF32   bool   `yaml:"cuda_tf32"`   // allow TF32 matrix products on the GPU
	Spin       bool   `yaml:"spin"`        // idle intra-op workers spin (ORT's default) instead of sleeping
	// WritePriority is that of live documents' embedding at write time:
	// "low" (worker threads at nice 19, so searches run first), "idle"
	// (nice 19 and SCHED_IDLE) or "normal".
	WritePriority string `yaml:"write_priority"`
}

// Chat is the OpenAI-compatible endpoint of reformulator=chat (DMAR_CHAT_API_KEY,
// DMAR_CHAT_API_KEY_FILE or api_key_file for its key).
type Chat struct {
	BaseURL    string        `yaml:"base_url"`
	Model      string        `yaml:"model"`
	Timeout    time.Duration `yaml:"timeout"`
	APIKeyFile string        `yaml:"api_key_file"`
	APIKey     Secret        `yaml:"-"`
}

// Server configures dmar serve.
type Server struct {
	Addr            string        `yaml:"addr"`
	RequestTimeout  time.Duration `yaml:"request_timeout"`
	BackendTimeout  time.Duration `yaml:"backend_timeout"`  // each Neo4j/Weaviate call
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"` // drain bound on SIGTERM
	CORSOrigins     []string      `yaml:"cors_origins"`     // empty: CORS off
	Auth            Auth          `yaml:"auth"`
	Pprof           bool          `yaml:"pprof"`
	PprofAddr       string        `yaml:"pprof_addr"`
	LogLevel        string        `yaml:"log_level"`
	// AllowedHosts are the Host header names answered; empty: loopback
	// names only when no API key is configured (DNS rebinding).
	AllowedHosts     []string `yaml:"allowed_hosts"`
	MaxResponseBytes int      `yaml:"max_response_bytes"` // a larger answer gets 422
	MaxRequestCost   int      `yaml:"max_request_cost"`   // Shapley game evaluations per request
	// EncoderBatchWindow is how long a query waits to share a sentence
	// encoder call with concurrent requests' queries (0: no batching).
	EncoderBatchWindow time.Duration `yaml:"encoder_batch_window"`
	// EncoderCalls bounds the batched encoder calls running at once.
	EncoderCalls int `yaml:"encoder_calls"`
}

// Auth turns API-key authentication on when Keys is not empty.
type Auth struct {
	Keys []APIKey `yaml:"keys"`
}

// APIKey is one accepted key, stored as the SHA-256 of the key (lowercase
// hex; `dmar config hash-key` prints it), with its own rate limit.
type APIKey struct {
	Name   string  `yaml:"name"`
	SHA256 string  `yaml:"sha256"`
	Rate   float64 `yaml:"rate"`  // requests per second; 0: unlimited
	Burst  int     `yaml:"burst"` // default: max(1, ceil(rate))
	// Write lets the key add, change and delete documents; keys are
	// read-only without it.
	Write bool `yaml:"write"`
}

// CacheDir is where scripts/setup.sh installs the runtime and models and
// where state is kept: $DMAR_CACHE, else ~/.cache/dmar.
func CacheDir(getenv func(string) string) string {
	if d := getenv("DMAR_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "dmar-cache")
	}
	return filepath.Join(home, ".cache", "dmar")
}

// Methods are the names method takes, the default first (pipeline.Methods;
// a test in cmd/dmar keeps the two equal).
var Methods = []string{"dmar", "paper"}

// DefaultEncoder is models.encoder's default (onnx.DefaultEncoderName).
const DefaultEncoder = "bge-small-en-v1.5-int8"

// DefaultRelationEncoder is models.relation_encoder's default: the model
// path relevance's constants were chosen with (internal/scoring/pathrel).
const DefaultRelationEncoder = "all-MiniLM-L6-v2"

// EncoderNames are the names of the encoder registry
// (internal/scoring/onnx/registry.go; a test there keeps the two equal).
var EncoderNames = []string{"all-MiniLM-L6-v2", "bge-small-en-v1.5", "bge-small-en-v1.5-int8", "e5-small-v2-int8"}

// EncoderFolder is the folder of the configured encoder: encoder_dir, except
// that encoder_dir left at the default encoder's folder under the cache
// follows models.encoder to the folder of that name beside it (where
// scripts/setup/30-encoders.sh puts it).
func (m Models) EncoderFolder() string {
	if m.Encoder != "" && m.Encoder != DefaultEncoder && filepath.Base(m.EncoderDir) == DefaultEncoder {
		return filepath.Join(filepath.Dir(m.EncoderDir), m.Encoder)
	}
	return m.EncoderDir
}

// RelationEncoderFolder is the folder of the relation encoder: beside the
// configured encoder's folder, under its name ("" when it is Encoder's).
func (m Models) RelationEncoderFolder() string {
	if m.RelationEncoder == "" || m.RelationEncoder == m.Encoder {
		return ""
	}
	return filepath.Join(filepath.Dir(m.EncoderFolder()), m.RelationEncoder)
}

// Default is the configuration that serves the embedded backend over data,
// keeping state and models under cache.
func Default(cache, data string) Config {
	return Config{
		Data:   data,
		State:  filepath.Join(cache, "state"),
		Graph:  "embedded",
		Index:  "embedded",
		Method: Methods[0],
		Models: Models{Encoder: DefaultEncoder, EncoderDir: filepath.Join(cache, "models", DefaultEncoder), EncoderBatch: 32, RelationEncoder: DefaultRelationEncoder, GNN: "models/gnn/gnn.onnx", Gate: "models/gate/gate.onnx", RelPrior: "models/relprior/relprior.onnx", EvidenceGate: "models/evgate/evgate.onnx", DocTokens: 128},
		ORT:    ORT{Lib: filepath.Join(cache, "onnxruntime", "libonnxruntime.so.1"), Device: "cpu", WritePriority: "low"},
		Chat:   Chat{Timeout: 10 * time.Second},
		Server: Server{Addr: "127.0.0.1:8080", RequestTimeout: 30 * time.Second, BackendTimeout: 10 * time.Second,
			ShutdownTimeout: 15 * time.Second, PprofAddr: "127.0.0.1:6060", LogLevel: "info",
			MaxResponseBytes: 4 << 20, MaxRequestCost: 20_000_000, EncoderBatchWindow: 2 * time.Millisecond, EncoderCalls: 1},
	}
}

// Secret is a password or key. It prints, logs and marshals as "[redacted]".
type Secret string

const redacted = "[redacted]"

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// IsZero reports whether the secret is unset.
func (s Secret) IsZero() bool { return s == "" }

// Reveal returns the secret itself, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// GoString keeps %#v from printing the secret.
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// MarshalText redacts in JSON, YAML and slog's text and JSON handlers.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Problem is one wrong setting.
type Problem struct {
	Field string // YAML path, environment variable or flag
	Msg   string
}

// Problems lists every wrong setting; it is the error of an invalid configuration.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problem", len(ps))
	if len(ps) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %s: %s", p.Field, p.Msg)
	}
	return b.String()
}

// Err returns ps as an error, nil when empty.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func (ps *Problems) add(field, format string, args ...any) {
	*ps = append(*ps, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// secretKeys are YAML keys that would put a secret in the file itself.
var secretKeys = map[string]string{
	"password": "DMAR_NEO4J_PASSWORD or neo4j.password_file",
	"api_key":  "the DMAR_*_API_KEY variable or an api_key_file",
	"key":      "server.auth.keys[].sha256 (the SHA-256 of the key, from `dmar config hash-key`)",
}

var yamlLine = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// File reads a YAML configuration over c. Unknown keys, wrong types and
// secrets written into the file are problems, all of them reported.
func File(c *Config, path string) Problems {
	var ps Problems
	raw, err := os.ReadFile(path)
	if err != nil {
		ps.add("config", "%v", err)
		return ps
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	err = dec.Decode(c)
	if errors.Is(err, errEOF) || err == nil {
		return ps
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		ps.add(path, "%v", err)
		return ps
	}
	for _, msg := range te.Errors {
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			if hint, ok := secretKeys[m[2]]; ok {
				ps.add(path+":"+m[1], "%q: secrets are not read from the configuration file; use %s", m[2], hint)
			} else {
				ps.add(path+":"+m[1], "unknown key %q", m[2])
			}
			continue
		}
		ps.add(path, "%s", msg)
	}
	return ps
}

// errEOF is what yaml.v3 returns for an empty document.
var errEOF = func() error { return yaml.NewDecoder(strings.NewReader("")).Decode(new(Config)) }()

// Aliases are the older names of settings, read when the setting's own
// variable is unset: DMAR_GNN_MODEL and DMAR_GATE_MODEL (the names the
// model loaders read before the configuration had DMAR_GNN and DMAR_GATE).
var Aliases = map[string]string{"DMAR_GNN": "DMAR_GNN_MODEL", "DMAR_GATE": "DMAR_GATE_MODEL"}

// Env applies the DMAR_* variables (through getenv) over c, then reads the
// secrets: VAR, else VAR_FILE, else the *_file setting.
func Env(c *Config, getenv func(string) string) Problems {
	var ps Problems
	for _, s := range Settings(c) {
		if s.Env == "" {
			continue
		}
		name := s.Env
		if getenv(name) == "" && Aliases[name] != "" && getenv(Aliases[name]) != "" {
			name = Aliases[name]
		}
		if v := getenv(name); v != "" {
			if err := s.Value.Set(v); err != nil {
				ps.add(name, "%v", err)
			}
		}
	}
	for _, sec := range []struct {
		env  string
		file *string
		dst  *Secret
	}{
		{"DMAR_NEO4J_PASSWORD", &c.Neo4j.PasswordFile, &c.Neo4j.Password},
		{"DMAR_WEAVIATE_API_KEY", &c.Weaviate.APIKeyFile, &c.Weaviate.APIKey},
		{"DMAR_CHAT_API_KEY", &c.Chat.APIKeyFile, &c.Chat.APIKey},
	} {
		if f := getenv(sec.env + "_FILE"); f != "" {
			*sec.file = f
		}
		if v := getenv(sec.env); v != "" {
			*sec.dst = Secret(v)
			continue
		}
		if *sec.file == "" {
			continue
		}
		b, err := os.ReadFile(*sec.file)
		if err != nil {
			// The error names the file, never its content.
			ps.add(sec.env+"_FILE", "cannot read the secret file: %v", err)
			continue
		}
		*sec.dst = Secret(strings.TrimRight(string(b), "\r\n"))
	}
	return ps
}

var (
	hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	origin    = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$`)
)

// Validate names every wrong field of c.
func (c *Config) Validate() Problems {
	var ps Problems
	if c.Graph == "embedded" || c.Graph == "" {
		if dir := c.BundleDir(); dir == "" {
			ps.add("data", "no KG bundle: set data (or kg) to a folder with triples.tsv, entities.jsonl and relations.json")
		} else if _, err := os.Stat(filepath.Join(dir, "triples.tsv")); err != nil {
			ps.add(fieldOf(c.KG, "kg", "data"), "%s has no triples.tsv (want a KG bundle folder)", dir)
		}
	} else if _, err := ParseGraph(c.Graph); err != nil {
		ps.add("graph", "%v", err)
	}
	if _, err := ParseIndex(c.Index); err != nil {
		ps.add("index", "%v", err)
	}
	if (c.Index == "embedded" || c.Index == "") && c.Corpus == "" && c.Data == "" {
		ps.add("corpus", "no corpus: set data or corpus")
	}
	if c.State == "" {
		ps.add("state", "must not be empty")
	}
	if !slices.Contains(Methods, c.Method) {
		ps.add("method", "%q: want one of %s", c.Method, strings.Join(Methods, ", "))
	}
	if !slices.Contains(EncoderNames, c.Models.Encoder) {
		ps.add("models.encoder", "%q: want one of %s", c.Models.Encoder, strings.Join(EncoderNames, ", "))
	}
	if c.Models.EncoderDir == "" {
		ps.add("models.encoder_dir", "must not be empty")
	}
	if c.Models.EncoderBatch < 1 {
		ps.add("models.encoder_batch", "must be 1 or more, got %d", c.Models.EncoderBatch)
	}
	if c.Models.DocTokens < 1 || c.Models.DocTokens > 256 {
		ps.add("models.doc_tokens", "must be between 1 and 256, got %d", c.Models.DocTokens)
	}
	if c.ORT.Device != "cpu" && c.ORT.Device != "cuda" {
		ps.add("ort.device", "must be cpu or cuda, got %q", c.ORT.Device)
	}
	if c.ORT.Threads < 0 {
		ps.add("ort.threads", "must be 0 (ONNX Runtime's choice) or more, got %d", c.ORT.Threads)
	}
	if c.ORT.WritePriority != "low" && c.ORT.WritePriority != "idle" && c.ORT.WritePriority != "normal" {
		ps.add("ort.write_priority", "must be low, idle or normal, got %q", c.ORT.WritePriority)
	}
	if c.ORT.CUDADevice < 0 {
		ps.add("ort.cuda_device", "must be 0 or more, got %d", c.ORT.CUDADevice)
	}
	if c.Chat.BaseURL != "" {
		if msg := checkURL(c.Chat.BaseURL, "http", "https"); msg != "" {
			ps.add("chat.base_url", "%q: %s", c.Chat.BaseURL, msg)
		}
		if c.Chat.Model == "" {
			ps.add("chat.model", "must be set with chat.base_url")
		}
	}
	if c.Chat.Timeout <= 0 {
		ps.add("chat.timeout", "must be positive, got %s", c.Chat.Timeout)
	}
	s := &c.Server
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		ps.add("server.addr", "%q is not HOST:PORT", s.Addr)
	}
	if s.RequestTimeout <= 0 || s.RequestTimeout > 10*time.Minute {
		ps.add("server.request_timeout", "must be between 0 and 10m, got %s", s.RequestTimeout)
	}
	if s.BackendTimeout <= 0 || (s.RequestTimeout > 0 && s.BackendTimeout > s.RequestTimeout) {
		ps.add("server.backend_timeout", "must be positive and at most request_timeout (%s), got %s", s.RequestTimeout, s.BackendTimeout)
	}
	if s.ShutdownTimeout <= 0 || s.ShutdownTimeout > 5*time.Minute {
		ps.add("server.shutdown_timeout", "must be between 0 and 5m, got %s", s.ShutdownTimeout)
	}
	for i, o := range s.CORSOrigins {
		if o != "*" && !origin.MatchString(o) {
			ps.add(fmt.Sprintf("server.cors_origins[%d]", i), "%q is not * or an origin like https://app.example.org", o)
		}
	}
	names := map[string]bool{}
	hashes := map[string]int{}
	for i, k := range s.Auth.Keys {
		f := fmt.Sprintf("server.auth.keys[%d]", i)
		if k.Name == "" {
			ps.add(f+".name", "must not be empty (it labels the key in logs and metrics)")
		} else if names[k.Name] {
			ps.add(f+".name", "%q is used twice", k.Name)
		}
		names[k.Name] = true
		if !hexSHA256.MatchString(k.SHA256) {
			ps.add(f+".sha256", "must be the 64 lowercase hex digits of the key's SHA-256 (dmar config hash-key prints it)")
		} else if j, dup := hashes[k.SHA256]; dup {
			// One key would carry two names and two rate limits, and which one
			// applies would depend on the order of the list.
			ps.add(f+".sha256", "is the same key as server.auth.keys[%d]", j)
		} else {
			hashes[k.SHA256] = i
		}
		if math.IsNaN(k.Rate) || math.IsInf(k.Rate, 0) {
			// YAML's .nan and .inf parse as floats; NaN compares false with
			// everything and would slip past the range check below as unlimited.
			ps.add(f+".rate", "must be a finite number of requests per second (0: unlimited), got %g", k.Rate)
		} else if k.Rate < 0 {
			ps.add(f+".rate", "must be 0 (unlimited) or more requests per second, got %g", k.Rate)
		}
		if k.Burst < 0 {
			ps.add(f+".burst", "must be 0 (default) or more, got %d", k.Burst)
		}
	}
	if s.Pprof {
		host, _, err := net.SplitHostPort(s.PprofAddr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			ps.add("server.pprof_addr", "%q must be a loopback HOST:PORT (pprof is never exposed)", s.PprofAddr)
		}
	}
	if s.MaxResponseBytes < 64<<10 {
		ps.add("server.max_response_bytes", "must be at least 65536, got %d", s.MaxResponseBytes)
	}
	if s.EncoderCalls < 1 || s.EncoderCalls > 64 {
		ps.add("server.encoder_calls", "must be between 1 and 64, got %d", s.EncoderCalls)
	}
	if s.EncoderBatchWindow < 0 || s.EncoderBatchWindow > 100*time.Millisecond {
		ps.add("server.encoder_batch_window", "must be between 0 (off) and 100ms, got %s", s.EncoderBatchWindow)
	}
	if s.MaxRequestCost < 10_000 {
		ps.add("server.max_request_cost", "must be at least 10000 game evaluations, got %d", s.MaxRequestCost)
	}
	switch s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		ps.add("server.log_level", "must be debug, info, warn or error, got %q", s.LogLevel)
	}
	return ps
}

func fieldOf(v, ifSet, otherwise string) string {
	if v != "" {
		return ifSet
	}
	return otherwise
}

// Redacted renders c as YAML with secrets shown as [redacted].
func (c Config) Redacted() string {
	type view struct {
		Config  `yaml:",inline"`
		Secrets map[string]string `yaml:"secrets"`
	}
	sec := map[string]string{}
	for k, v := range map[string]Secret{"neo4j.password": c.Neo4j.Password, "weaviate.api_key": c.Weaviate.APIKey, "chat.api_key": c.Chat.APIKey} {
		if v != "" {
			sec[k] = v.String()
		} else {
			sec[k] = "(unset)"
		}
	}
	b, err := yaml.Marshal(view{c, sec})
	if err != nil {
		return err.Error()
	}
	return string(b)
}
