package config

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Setting is one scalar setting with its YAML key, environment variable and
// flag. Value writes into the Config that Settings was called with.
type Setting struct {
	Key   string // YAML path
	Env   string // DMAR_* variable
	Flag  string // flag name; "" for none
	Serve bool   // a flag of dmar serve only
	Usage string
	Value flag.Value
}

// Settings lists c's settings bound to its fields: the one table behind
// environment variables, flags and the reference in docs/operations.md.
func Settings(c *Config) []Setting {
	return []Setting{
		{"data", "DMAR_DATA", "data", false, "folder with a KG bundle (triples.tsv, entities.jsonl, relations.json) and corpus.jsonl", str(&c.Data)},
		{"kg", "DMAR_KG", "kg", false, "KG bundle folder, when not data", str(&c.KG)},
		{"corpus", "DMAR_CORPUS", "corpus", false, "corpus JSONL file, when not data/corpus.jsonl; several files separated by commas are searched as one corpus", str(&c.Corpus)},
		{"state", "DMAR_STATE", "state", false, "folder for loaded graphs and indexes, keyed by input content", str(&c.State)},
		{"graph", "DMAR_GRAPH", "graph", false, "graph backend: embedded, or neo4j://HOST:PORT", str(&c.Graph)},
		{"index", "DMAR_INDEX", "index", false, "search backend: embedded, or weaviate://HOST:PORT/Class (several nodes: weaviate://HOST:PORT,HOST:PORT,.../Class)", str(&c.Index)},
		{"weaviate.shards", "DMAR_WEAVIATE_SHARDS", "weaviate-shards", false, "shards of a Weaviate collection dmar creates (0: Weaviate's default, one per node)", integer(&c.Weaviate.Shards)},
		{"weaviate.replicas", "DMAR_WEAVIATE_REPLICAS", "weaviate-replicas", false, "copies of each shard of a Weaviate collection dmar creates (0: one); set, an existing collection with another replication factor is refused", integer(&c.Weaviate.Replicas)},
		{"weaviate.read_consistency", "DMAR_WEAVIATE_READ_CONSISTENCY", "weaviate-read-consistency", false, "replicas that answer a Weaviate read: ONE, QUORUM or ALL", str(&c.Weaviate.ReadConsistency)},
		{"weaviate.write_consistency", "DMAR_WEAVIATE_WRITE_CONSISTENCY", "weaviate-write-consistency", false, "replicas that acknowledge a Weaviate write before it is acknowledged: ONE, QUORUM or ALL", str(&c.Weaviate.WriteConsistency)},
		{"method", "DMAR_METHOD", "method", false, "the method requests start from: dmar (question-aware: the graph channel, the context linker; the default) or paper (DMAR-SPEC.md's); a request's method option overrides it", str(&c.Method)},
		{"neo4j.user", "DMAR_NEO4J_USER", "", false, "Neo4j user (with a password)", str(&c.Neo4j.User)},
		{"neo4j.database", "DMAR_NEO4J_DATABASE", "", false, "Neo4j database (default neo4j)", str(&c.Neo4j.Database)},
		{"models.encoder", "DMAR_ENCODER", "encoder", false, "sentence encoder: bge-small-en-v1.5-int8 (default), all-MiniLM-L6-v2, bge-small-en-v1.5 or e5-small-v2-int8 (docs/onnx.md, docs/encoders.md)", str(&c.Models.Encoder)},
		{"models.encoder_dir", "DMAR_ENCODER_DIR", "encoder-dir", false, "sentence encoder folder built by scripts/setup.sh; left at the default, it follows models.encoder", str(&c.Models.EncoderDir)},
		{"models.relation_encoder", "DMAR_RELATION_ENCODER", "relation-encoder", false, "encoder that matches the question to relation texts for path relevance (a name of models.encoder's list; empty: models.encoder); its constants were chosen with all-MiniLM-L6-v2, the default (docs/encoders.md)", str(&c.Models.RelationEncoder)},
		{"models.relation_projection", "DMAR_RELATION_PROJECTION", "relation-projection", false, "opt-in: ONNX model that maps the encoder's question states into the relation encoder's space, so a request encodes its question once (models/relproj/relproj.onnx: 1.6x the throughput, kgqa dev R@5 +.017, TriviaQA -.024; models/relproj/README.md); empty (the default): the relation encoder encodes it too", str(&c.Models.RelProjection)},
		{"models.encoder_batch", "DMAR_ENCODER_BATCH", "", false, "texts per sentence encoder call", integer(&c.Models.EncoderBatch)},
		{"models.gnn", "DMAR_GNN", "gnn", false, "Siamese GNN ONNX model; empty: the GED heuristic (older name: env DMAR_GNN_MODEL)", str(&c.Models.GNN)},
		{"models.gate", "DMAR_GATE", "gate", false, "gate ONNX model; empty: fixed weights (older name: env DMAR_GATE_MODEL)", str(&c.Models.Gate)},
		{"models.relprior", "DMAR_RELPRIOR", "relprior", false, "question -> relation prior ONNX model, read by dmar eval's path-prior variants (systems ...-pX); empty: off", str(&c.Models.RelPrior)},
		{"models.evgate", "DMAR_EVGATE", "evgate", false, "evidence-aware gate ONNX model (option gate=evidence); empty: off", str(&c.Models.EvidenceGate)},
		{"models.ranker", "DMAR_RANKER", "ranker", false, "learned ranker ONNX model of the final pool (option final_rank learned, the dmar method's); empty: off", str(&c.Models.Ranker)},
		{"models.doc_tokens", "DMAR_DOC_TOKENS", "doc-tokens", false, "documents are embedded from their first N word pieces at load time (at most 256)", integer(&c.Models.DocTokens)},
		{"ort.lib", "DMAR_ORT_LIB", "ort-lib", false, "ONNX Runtime library", str(&c.ORT.Lib)},
		{"ort.device", "DMAR_DEVICE", "device", false, "cpu or cuda", str(&c.ORT.Device)},
		{"ort.threads", "DMAR_ORT_THREADS", "threads", false, "ONNX Runtime intra-op threads of a query call, 0 = half the CPUs (a request runs two model calls at once), at least 1; load-time corpus embedding runs this many single-threaded calls at once, 0 = one per CPU", integer(&c.ORT.Threads)},
		{"ort.spin", "DMAR_ORT_SPIN", "ort-spin", false, "ONNX Runtime's idle intra-op workers spin waiting for work (its own default) instead of sleeping; off, concurrent requests get the cores they would burn", boolean(&c.ORT.Spin)},
		{"ort.write_priority", "DMAR_WRITE_PRIORITY", "write-priority", false, "live documents are embedded at write time on threads of low priority (nice 19: searches run first), idle (nice 19 and SCHED_IDLE) or normal", str(&c.ORT.WritePriority)},
		{"ort.cuda_device", "DMAR_CUDA_DEVICE", "", false, "CUDA device id with device cuda", integer(&c.ORT.CUDADevice)},
		{"ort.cuda_tf32", "DMAR_CUDA_TF32", "", false, "with device cuda, allow TF32 matrix products (faster; results differ from cpu in the 4th decimal)", boolean(&c.ORT.CUDATF32)},
		{"chat.base_url", "DMAR_CHAT_BASE_URL", "chat-url", false, "OpenAI-compatible base URL for reformulator=chat, e.g. http://127.0.0.1:11434/v1", str(&c.Chat.BaseURL)},
		{"chat.model", "DMAR_CHAT_MODEL", "chat-model", false, "model name for reformulator=chat", str(&c.Chat.Model)},
		{"chat.timeout", "DMAR_CHAT_TIMEOUT", "chat-timeout", false, "time limit of one chat reformulation", dur(&c.Chat.Timeout)},
		{"quiet", "DMAR_QUIET", "quiet", false, "no progress output", boolean(&c.Quiet)},
		{"embedded.compact_vectors", "DMAR_COMPACT_VECTORS", "compact-vectors", false, "the embedded index keeps int8 vectors in memory and the float32 ones in a file, re-scoring each search's best candidates from it (the same scores, a quarter of the vectors' memory; slower below 50,000 documents)", boolean(&c.Embedded.CompactVectors)},
		{"embedded.vector_dir", "DMAR_VECTOR_DIR", "vector-dir", false, "with embedded.compact_vectors, the directory of the vector file (default: the system's temporary directory)", str(&c.Embedded.VectorDir)},
		{"textgraph.extractor", "DMAR_TEXT_GRAPH", "text-graph", false, "build the text graph at load with this phrase extractor: heuristic, spacy (make setup installs it) or openie:FILE (a peer's extraction, for measuring); empty: none (docs/textgraph.md)", str(&c.TextGraph.Extractor)},
		{"textgraph.python", "DMAR_TEXT_GRAPH_PYTHON", "", false, "Python interpreter of the environment that holds spaCy, for the spacy extractor", str(&c.TextGraph.Python)},
		{"server.addr", "DMAR_ADDR", "addr", true, "listen address; loopback unless told otherwise", str(&c.Server.Addr)},
		{"server.request_timeout", "DMAR_REQUEST_TIMEOUT", "request-timeout", true, "time limit of one request", dur(&c.Server.RequestTimeout)},
		{"server.backend_timeout", "DMAR_BACKEND_TIMEOUT", "backend-timeout", true, "time limit of one Neo4j or Weaviate call", dur(&c.Server.BackendTimeout)},
		{"server.shutdown_timeout", "DMAR_SHUTDOWN_TIMEOUT", "shutdown-timeout", true, "on SIGTERM, how long in-flight requests may take to finish", dur(&c.Server.ShutdownTimeout)},
		{"server.cors_origins", "DMAR_CORS_ORIGINS", "cors-origins", true, "comma-separated origins allowed by CORS (* for any); empty: CORS off", list(&c.Server.CORSOrigins)},
		{"server.pprof", "DMAR_PPROF", "pprof", true, "serve net/http/pprof on pprof_addr (loopback only)", boolean(&c.Server.Pprof)},
		{"server.pprof_addr", "DMAR_PPROF_ADDR", "pprof-addr", true, "loopback address of pprof", str(&c.Server.PprofAddr)},
		{"server.log_level", "DMAR_LOG_LEVEL", "log-level", true, "debug, info, warn or error", str(&c.Server.LogLevel)},
		{"server.allowed_hosts", "DMAR_ALLOWED_HOSTS", "allowed-hosts", true, "comma-separated Host names answered (* for any); empty: loopback only when no API key is configured", list(&c.Server.AllowedHosts)},
		{"server.max_response_bytes", "DMAR_MAX_RESPONSE_BYTES", "max-response-bytes", true, "largest response body; a larger answer is refused with 422 naming the options that grew it", integer(&c.Server.MaxResponseBytes)},
		{"server.max_request_cost", "DMAR_MAX_REQUEST_COST", "max-request-cost", true, "Shapley game evaluations one request may need (query entities x samples x documents); more is refused with 422 before the work", integer(&c.Server.MaxRequestCost)},
		{"server.mcp_max_body_bytes", "DMAR_MCP_MAX_BODY_BYTES", "mcp-max-body-bytes", true, "largest POST /mcp body; a larger one is refused with 413", integer(&c.Server.MCPMaxBodyBytes)},
		{"server.mcp_max_batch", "DMAR_MCP_MAX_BATCH", "mcp-max-batch", true, "most JSON-RPC messages in one POST /mcp batch (they run at once, each charged to the key's rate limit); more is refused with 413", integer(&c.Server.MCPMaxBatch)},
		{"server.encoder_calls", "DMAR_ENCODER_CALLS", "encoder-calls", true, "batched sentence encoder calls running at once (with ort.threads 1, one per core uses every core)", integer(&c.Server.EncoderCalls)},
		{"server.encoder_batch_window", "DMAR_ENCODER_BATCH_WINDOW", "encoder-batch-window", true, "how long a query waits to share a sentence encoder call with concurrent requests (0: no batching); the int8 query encoder and the relation encoder wait for a free call slot only", dur(&c.Server.EncoderBatchWindow)},
	}
}

type strValue struct{ p *string }

func str(p *string) flag.Value        { return strValue{p} }
func (v strValue) String() string     { return deref(v.p) }
func (v strValue) Set(s string) error { *v.p = s; return nil }
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type intValue struct{ p *int }

func integer(p *int) flag.Value { return intValue{p} }
func (v intValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}
func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*v.p = n
	return nil
}

type durValue struct{ p *time.Duration }

func dur(p *time.Duration) flag.Value { return durValue{p} }
func (v durValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}
func (v durValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a duration like 30s or 2m", s)
	}
	*v.p = d
	return nil
}

type boolValue struct{ p *bool }

func boolean(p *bool) flag.Value     { return boolValue{p} }
func (v boolValue) IsBoolFlag() bool { return true }
func (v boolValue) String() string   { return strconv.FormatBool(v.p != nil && *v.p) }
func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not true or false", s)
	}
	*v.p = b
	return nil
}

type listValue struct{ p *[]string }

func list(p *[]string) flag.Value { return listValue{p} }
func (v listValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}
func (v listValue) Set(s string) error {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	*v.p = out
	return nil
}
