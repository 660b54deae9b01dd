package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dmar-kg/dmar/internal/errs"
)

// The open-domain benchmarks of the paper's Table 4 as ../shared/data holds
// them (its README): NQ-open with its own gold passages, TriviaQA and FEVER
// over codexm. Their records carry fields the systems never see (source,
// answer_qids, evidence); the readers keep what the metrics need.

// NQCorpusFile is the passage file beside an NQ-open question file: its
// passages are pooled with the configured corpus (Dataset.ExtraCorpora).
const NQCorpusFile = "corpus.jsonl"

// readNQ reads NQ-open: answers for EM/F1, gold = the question's passage.
// Its passages (corpus.jsonl beside FILE) are searched together with the
// configured corpus, not instead of it.
func readNQ(path string) (*Dataset, error) {
	ds, dir, err := readAnswerRecords(path, "nq-open")
	if err != nil {
		return nil, err
	}
	extra := filepath.Join(dir, NQCorpusFile)
	if _, err := os.Stat(extra); err != nil {
		return nil, fmt.Errorf("nq-open: its passages %s: %w", extra, err)
	}
	ds.ExtraCorpora = []string{extra}
	ds.Notes = append(ds.Notes, "NQ-open pooled setting: the questions' passages ("+extra+") are searched together with the configured corpus; a passage's id is not a QID, so the knowledge graph reaches it only through what it mentions.")
	return ds, nil
}

// readTriviaQA reads TriviaQA over codexm: answers = the dataset's aliases,
// gold = the answer entities' extracts (AnswerQIDs give the hub strata).
func readTriviaQA(path string) (*Dataset, error) {
	ds, _, err := readAnswerRecords(path, "triviaqa")
	if err != nil {
		return nil, err
	}
	ds.Notes = append(ds.Notes, "TriviaQA over the configured corpus: gold = the extract of the entity the answer names (the kgqa convention).")
	return ds, nil
}

// readAnswerRecords reads the question file of NQ-open or TriviaQA (named
// by what in errors): records with answers and gold passages, and
// answer_qids where the dataset has them. It returns the dataset and the
// folder the questions came from.
func readAnswerRecords(path, what string) (*Dataset, string, error) {
	qpath, dir := benchFile(path, "dev.jsonl")
	ds := &Dataset{Setting: "pooled"}
	seen := map[string]bool{}
	err := eachLine(qpath, func(_ int, line []byte) error {
		var r struct {
			ID         string   `json:"id"`
			Source     string   `json:"source"`
			Question   string   `json:"question"`
			Answers    []string `json:"answers"`
			AnswerQIDs []string `json:"answer_qids"`
			GoldDocIDs []string `json:"gold_doc_ids"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("not %s %s record: %w", article(what), what, err)
		}
		if err := checkRecord(r.ID, r.Question, seen); err != nil {
			return err
		}
		if len(r.GoldDocIDs) == 0 {
			return fmt.Errorf("question %q: %s record needs gold_doc_ids", r.ID, what)
		}
		ds.Questions = append(ds.Questions, Question{ID: r.ID, Question: r.Question, Answers: r.Answers, Gold: r.GoldDocIDs,
			AnswerQIDs: r.AnswerQIDs, Strata: map[string]string{}})
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return ds, dir, nil
}

// article is "a" or "an" before word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// FEVER's labels as the dataset spells them.
const (
	LabelSupports = "SUPPORTS"
	LabelRefutes  = "REFUTES"
	LabelNEI      = "NOT ENOUGH INFO"
)

// readFEVER reads FEVER claims over codexm: the claim is the question, the
// label is kept for verification, and gold = the pages of the evidence.
// Claims labelled NOT ENOUGH INFO have no gold: they count for the verdict
// only, never in the retrieval metrics (Score skips a question without gold).
func readFEVER(path string) (*Dataset, error) {
	qpath, _ := benchFile(path, "dev.jsonl")
	ds := &Dataset{Setting: "pooled"}
	seen := map[string]bool{}
	verifiable := 0
	err := eachLine(qpath, func(_ int, line []byte) error {
		var r struct {
			ID         string          `json:"id"`
			Source     string          `json:"source"`
			Claim      string          `json:"claim"`
			Label      string          `json:"label"`
			Evidence   [][][]any       `json:"evidence"`
			GoldDocIDs []string        `json:"gold_doc_ids"`
			SubjectQID json.RawMessage `json:"subject_qid"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("not a fever record: %w", err)
		}
		if err := checkRecord(r.ID, r.Claim, seen); err != nil {
			return err
		}
		switch r.Label {
		case LabelSupports, LabelRefutes:
			if len(r.GoldDocIDs) == 0 {
				return fmt.Errorf("claim %q: a %s claim needs gold_doc_ids", r.ID, r.Label)
			}
			verifiable++
		case LabelNEI:
			r.GoldDocIDs = nil
		default:
			return fmt.Errorf("claim %q: label must be %s, %s or %s, got %q", r.ID, LabelSupports, LabelRefutes, LabelNEI, errs.Clip(r.Label, errs.MaxEcho))
		}
		q := Question{ID: r.ID, Question: r.Claim, Gold: r.GoldDocIDs, Label: r.Label, Strata: map[string]string{"label": r.Label}}
		for _, set := range r.Evidence {
			var ev []Evidence
			for _, e := range set {
				if len(e) != 2 {
					return fmt.Errorf("claim %q: evidence entries must be [doc id, sentence index]", r.ID)
				}
				id, ok1 := e[0].(string)
				idx, ok2 := e[1].(float64)
				if !ok1 || !ok2 || idx < 0 || idx != float64(int(idx)) {
					return fmt.Errorf("claim %q: evidence entries must be [doc id, sentence index]", r.ID)
				}
				ev = append(ev, Evidence{Doc: id, Sentence: int(idx)})
			}
			q.Evidence = append(q.Evidence, ev)
		}
		ds.Questions = append(ds.Questions, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ds.Notes = append(ds.Notes, fmt.Sprintf("FEVER claims over the configured corpus: %d verifiable claims (SUPPORTS, REFUTES) are judged on retrieval, gold = their evidence pages; the %d NOT ENOUGH INFO claims count for verification only.", verifiable, len(ds.Questions)-verifiable))
	return ds, nil
}

// Evidence is one sentence of a FEVER evidence set: a document and the
// index of a sentence in it.
type Evidence struct {
	Doc      string
	Sentence int
}

// checkRecord checks a record's id and question text and that the id is new.
func checkRecord(id, question string, seen map[string]bool) error {
	switch {
	case id == "":
		return fmt.Errorf("missing id")
	case strings.TrimSpace(question) == "":
		return fmt.Errorf("question %q: missing question text", id)
	case seen[id]:
		return fmt.Errorf("duplicate id %q", id)
	}
	seen[id] = true
	return nil
}
