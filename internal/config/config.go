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
	"os"
	"path/filepath"
	"regexp"
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
	// TextGraph is the graph built from the corpus's text (textgraph.go).
	TextGraph TextGraph `yaml:"textgraph"`
	// Embedded holds the embedded index's storage settings.
	Embedded Embedded `yaml:"embedded"`
}

// Embedded is how the embedded index stores its vectors. With
// CompactVectors it keeps int8 codes in memory and the float32 vectors in
// a file in VectorDir (default: the system's temporary directory), read
// back to score each search's best candidates exactly: a quarter of the
// vectors' memory, the same scores (docs/ann.md).
type Embedded struct {
	CompactVectors bool   `yaml:"compact_vectors"`
	VectorDir      string `yaml:"vector_dir"`
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
// DMAR_WEAVIATE_API_KEY_FILE or api_key_file) and, for a cluster, how a
// collection dmar creates is sharded and replicated and the consistency
// levels of its reads and writes (checked in cluster.go).
type Weaviate struct {
	APIKeyFile string `yaml:"api_key_file"`
	APIKey     Secret `yaml:"-"`
	// Shards of a collection dmar creates (0: Weaviate's default, one per
	// node) and Replicas, the copies of each (0: one; set, an existing
	// collection with another replication factor is refused).
	Shards   int `yaml:"shards"`
	Replicas int `yaml:"replicas"`
	// ReadConsistency and WriteConsistency: ONE, QUORUM or ALL.
	ReadConsistency  string `yaml:"read_consistency"`
	WriteConsistency string `yaml:"write_consistency"`
}

// Models are the ONNX model files.
type Models struct {
	Encoder      string `yaml:"encoder"` // a name of the encoder registry (internal/scoring/onnx/registry.go)
	EncoderDir   string `yaml:"encoder_dir"`
	EncoderBatch int    `yaml:"encoder_batch"` // texts per encoder call
	// RelationEncoder is the registry name of the encoder path relevance
	// matches questions to relation texts with; empty: Encoder.
	RelationEncoder string `yaml:"relation_encoder"`
	// RelProjection maps the encoder's question states into the relation
	// encoder's space (models/relproj), so a request encodes its question
	// once; empty (the default): the relation encoder encodes it too.
	RelProjection string `yaml:"relation_projection"`
	GNN           string `yaml:"gnn"`      // empty: the GED heuristic
	Gate          string `yaml:"gate"`     // empty: fixed weights
	RelPrior      string `yaml:"relprior"` // question -> relation prior; empty: off
	EvidenceGate  string `yaml:"evgate"`   // evidence-aware gate (option gate=evidence); empty: off
	Ranker        string `yaml:"ranker"`   // learned ranker of the final pool (option final_rank learned); empty: off
	DocTokens     int    `yaml:"doc_tokens"`
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
	// MCPMaxBodyBytes and MCPMaxBatch bound a POST /mcp: its body, and the
	// messages of one JSON-RPC batch (they run at once).
	MCPMaxBodyBytes int `yaml:"mcp_max_body_bytes"`
	MCPMaxBatch     int `yaml:"mcp_max_batch"`
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
		Data:      data,
		State:     filepath.Join(cache, "state"),
		Graph:     "embedded",
		Index:     "embedded",
		Method:    Methods[0],
		Models:    Models{Encoder: DefaultEncoder, EncoderDir: filepath.Join(cache, "models", DefaultEncoder), EncoderBatch: 32, RelationEncoder: DefaultRelationEncoder, GNN: "models/gnn/gnn.onnx", Gate: "models/gate/gate.onnx", RelPrior: "models/relprior/relprior.onnx", EvidenceGate: "models/evgate/evgate.onnx", Ranker: "models/ranker/ranker.onnx", DocTokens: 128},
		ORT:       ORT{Lib: filepath.Join(cache, "onnxruntime", "libonnxruntime.so.1"), Device: "cpu", WritePriority: "low"},
		Chat:      Chat{Timeout: 10 * time.Second},
		TextGraph: TextGraph{Python: DefaultTextGraphPython(cache)},
		Server: Server{Addr: "127.0.0.1:8080", RequestTimeout: 30 * time.Second, BackendTimeout: 10 * time.Second,
			ShutdownTimeout: 15 * time.Second, PprofAddr: "127.0.0.1:6060", LogLevel: "info",
			MaxResponseBytes: 4 << 20, MaxRequestCost: 20_000_000, MCPMaxBodyBytes: 1 << 20, MCPMaxBatch: 16, EncoderBatchWindow: 2 * time.Millisecond, EncoderCalls: 1},
		Weaviate: Weaviate{ReadConsistency: "ONE", WriteConsistency: "QUORUM"},
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
