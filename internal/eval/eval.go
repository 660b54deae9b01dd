// Package eval measures retrieval quality: benchmark adapters (KGQA JSONL,
// HotpotQA, MuSiQue, a plain JSONL format), the systems compared in one run
// (BM25, dense, hybrid, DMAR and its ablations), ranking and answer metrics,
// paired bootstrap confidence intervals, latency percentiles, and the
// report, JSON, per-question traces and plots a run writes.
package eval

import "github.com/dmar-kg/dmar/internal/retrieval"

// Question is one evaluation item. Only Question is shown to the systems;
// everything else is gold or metadata.
type Question struct {
	ID       string
	Question string
	// Answers are the gold answer strings and their aliases (may be empty).
	Answers []string
	// Gold are the ids of the relevant documents.
	Gold []string
	// Strata name the benchmark's own subsets this question belongs to,
	// e.g. {"connection": "2-hop", "answer_hub": "hub"}.
	Strata map[string]string
	// Pool, when set, restricts retrieval to these document ids (HotpotQA's
	// distractor setting: each question over its own 10 paragraphs).
	Pool []string
	// Label is a FEVER-style claim label (SUPPORTS, REFUTES, NOT ENOUGH INFO), if any.
	Label string
	// Topics are the gold topic entities (kgqa topic_qids), for the linking
	// metrics; never shown to the systems.
	Topics []string
	// AnswerQIDs are the entities the answers name (TriviaQA), for the hub
	// strata; never shown to the systems.
	AnswerQIDs []string
	// Evidence are a FEVER claim's gold evidence sets (any one set, whole,
	// verifies the claim), for the strict score.
	Evidence [][]Evidence
}

// Dataset is a benchmark read by an adapter.
type Dataset struct {
	Format  string // kgqa, jsonl, hotpotqa, hotpotqa-distractor, musique
	Path    string
	Setting string // "pooled" (one corpus for all questions) or "per-question"
	// Questions in file order.
	Questions []Question
	// Corpus holds the documents a benchmark brings with it (HotpotQA,
	// MuSiQue); nil when the corpus is configured separately (kgqa, jsonl).
	Corpus []retrieval.Document
	// ExtraCorpora are corpus files searched together with the configured
	// corpus (NQ-open's passages beside the entity pages).
	ExtraCorpora []string
	// Notes are facts about the adaptation a reader of the report needs.
	Notes []string
}
