package eval

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Formats lists the dataset formats Open accepts.
var Formats = []string{"kgqa", "jsonl", "hotpotqa", "hotpotqa-distractor", "musique", "nq-open", "triviaqa", "fever"}

// Open reads a dataset given as FORMAT:PATH. limit > 0 keeps the first limit
// questions; a benchmark's corpus is always kept whole (the pooled setting
// searches all of it).
func Open(spec string, limit int) (*Dataset, error) {
	format, path, ok := strings.Cut(spec, ":")
	if !ok || path == "" {
		return nil, fmt.Errorf("dataset %q: want FORMAT:PATH with FORMAT one of %v", spec, Formats)
	}
	var ds *Dataset
	var err error
	switch format {
	case "kgqa":
		ds, err = readKGQA(path)
	case "jsonl":
		ds, err = readPlain(path)
	case "hotpotqa", "hotpotqa-distractor":
		ds, err = readHotpot(path, format == "hotpotqa-distractor")
	case "musique":
		ds, err = readMusique(path)
	case "nq-open":
		ds, err = readNQ(path)
	case "triviaqa":
		ds, err = readTriviaQA(path)
	case "fever":
		ds, err = readFEVER(path)
	default:
		return nil, fmt.Errorf("dataset %q: unknown format %q (want one of %v)", spec, format, Formats)
	}
	if err != nil {
		return nil, err
	}
	ds.Format, ds.Path = format, path
	if len(ds.Questions) == 0 {
		return nil, fmt.Errorf("dataset %s: no questions", spec)
	}
	if limit > 0 && len(ds.Questions) > limit {
		ds.Questions = ds.Questions[:limit]
	}
	return ds, nil
}

// eachLine calls fn for every non-blank line of a JSONL file with its number.
func eachLine(path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if err := fn(n, sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// readKGQA reads ../shared/data/kgqa/*.jsonl: gold = gold_doc_ids, answers =
// answer labels and aliases, strata = kg.connection and answer_is_hub,
// topics = topic_qids (the linking metrics).
func readKGQA(path string) (*Dataset, error) {
	ds := &Dataset{Setting: "pooled"}
	seen := map[string]bool{}
	err := eachLine(path, func(_ int, line []byte) error {
		var r struct {
			ID            string     `json:"id"`
			Source        string     `json:"source"`
			Question      string     `json:"question"`
			AnswerLabels  []string   `json:"answer_labels"`
			AnswerAliases [][]string `json:"answer_aliases"`
			GoldDocIDs    []string   `json:"gold_doc_ids"`
			TopicQIDs     []string   `json:"topic_qids"`
			AnswerIsHub   *bool      `json:"answer_is_hub"`
			KG            struct {
				Connection string `json:"connection"`
			} `json:"kg"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("not a kgqa record: %w", err)
		}
		if r.ID == "" || strings.TrimSpace(r.Question) == "" || len(r.GoldDocIDs) == 0 {
			return fmt.Errorf("kgqa record needs id, question and gold_doc_ids")
		}
		if seen[r.ID] {
			return fmt.Errorf("duplicate id %q", r.ID)
		}
		seen[r.ID] = true
		q := Question{ID: r.ID, Question: r.Question, Gold: r.GoldDocIDs, Strata: map[string]string{}, Topics: r.TopicQIDs}
		q.Answers = append(q.Answers, r.AnswerLabels...)
		for _, as := range r.AnswerAliases {
			q.Answers = append(q.Answers, as...)
		}
		if r.KG.Connection != "" {
			q.Strata["connection"] = r.KG.Connection
		}
		if r.AnswerIsHub != nil {
			q.Strata["answer_hub"] = map[bool]string{true: "hub", false: "not_hub"}[*r.AnswerIsHub]
		}
		if r.Source != "" {
			q.Strata["source"] = r.Source
		}
		ds.Questions = append(ds.Questions, q)
		return nil
	})
	return ds, err
}

// PlainRecord is the plain JSONL format for users' own data (docs/eval.md).
type PlainRecord struct {
	ID         string            `json:"id"`
	Question   string            `json:"question"`
	Answers    []string          `json:"answers"`
	GoldDocIDs []string          `json:"gold_doc_ids"`
	Label      string            `json:"label,omitempty"`
	Strata     map[string]string `json:"strata,omitempty"`
}

func readPlain(path string) (*Dataset, error) {
	ds := &Dataset{Setting: "pooled"}
	seen := map[string]bool{}
	err := eachLine(path, func(_ int, line []byte) error {
		var r PlainRecord
		dec := json.NewDecoder(strings.NewReader(string(line)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("want {id, question, answers[], gold_doc_ids[]}: %w", err)
		}
		switch {
		case r.ID == "":
			return fmt.Errorf("missing id")
		case strings.TrimSpace(r.Question) == "":
			return fmt.Errorf("question %q: missing question", r.ID)
		case len(r.GoldDocIDs) == 0 && len(r.Answers) == 0 && r.Label == "":
			return fmt.Errorf("question %q: needs gold_doc_ids, answers or a label", r.ID)
		case seen[r.ID]:
			return fmt.Errorf("duplicate id %q", r.ID)
		}
		seen[r.ID] = true
		ds.Questions = append(ds.Questions, Question{ID: r.ID, Question: r.Question, Answers: r.Answers, Gold: r.GoldDocIDs, Label: r.Label, Strata: r.Strata})
		return nil
	})
	return ds, err
}

// benchFile resolves PATH as a folder holding name, or the file itself.
func benchFile(path, name string) (string, string) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, name), path
	}
	return path, filepath.Dir(path)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("dataset %s: %w", path, err)
	}
	return nil
}

// yesNo answers (HotpotQA comparisons) say nothing when found in a text.
func answerStrings(as ...string) []string {
	var out []string
	for _, a := range as {
		switch Normalize(a) {
		case "", "yes", "no":
			continue
		}
		out = append(out, a)
	}
	return out
}

// readHotpot reads HotpotQA distractor JSON (questions.json, and corpus.json
// beside it for the pooled setting). A document is a paragraph: id = title
// (unique in HotpotQA), text = its sentences joined.
func readHotpot(path string, perQuestion bool) (*Dataset, error) {
	qpath, dir := benchFile(path, "questions.json")
	var raw []hotpotRecord
	if err := readJSON(qpath, &raw); err != nil {
		return nil, err
	}
	paras := paragraphs{text: map[string]string{}}
	ds := &Dataset{Setting: "pooled"}
	if perQuestion {
		ds.Setting = "per-question"
	}
	for i, r := range raw {
		q, err := r.question(i, qpath, &paras)
		if err != nil {
			return nil, err
		}
		if !perQuestion {
			q.Pool = nil
		}
		ds.Questions = append(ds.Questions, q)
	}
	if !perQuestion {
		if err := paras.addHotpotCorpus(filepath.Join(dir, "corpus.json")); err != nil {
			return nil, err
		}
	}
	sort.Strings(paras.order)
	for _, t := range paras.order {
		ds.Corpus = append(ds.Corpus, retrieval.Document{ID: t, Title: t, Text: paras.text[t]})
	}
	if perQuestion {
		ds.Notes = append(ds.Notes, "HotpotQA distractor setting: each question is searched over its own 10 paragraphs only (the paper's code); the index holds all paragraphs, each search is filtered to the question's ids.")
	} else {
		ds.Notes = append(ds.Notes, fmt.Sprintf("HotpotQA pooled setting: every question is searched over all %d paragraphs.", len(ds.Corpus)))
	}
	ds.Notes = append(ds.Notes, "Answer recall skips yes/no answers (comparison questions): finding \"yes\" in a text says nothing.")
	return ds, nil
}

// hotpotRecord is one question of HotpotQA's JSON.
type hotpotRecord struct {
	ID       string            `json:"_id"`
	Question string            `json:"question"`
	Answer   string            `json:"answer"`
	Type     string            `json:"type"`
	Level    string            `json:"level"`
	Support  [][]any           `json:"supporting_facts"`
	Context  []json.RawMessage `json:"context"`
}

// question is r, the i-th record of qpath, as a Question whose pool is its
// context paragraphs (added to paras) and whose gold is the titles of its
// supporting facts.
func (r hotpotRecord) question(i int, qpath string, paras *paragraphs) (Question, error) {
	if r.ID == "" || r.Question == "" {
		return Question{}, fmt.Errorf("%s: question %d: missing _id or question", qpath, i)
	}
	q := Question{ID: r.ID, Question: r.Question, Answers: []string{r.Answer}, Strata: map[string]string{}}
	if r.Type != "" {
		q.Strata["type"] = r.Type
	}
	if r.Level != "" {
		q.Strata["level"] = r.Level
	}
	for _, c := range r.Context {
		var pair []json.RawMessage
		var title string
		var sents []string
		if err := json.Unmarshal(c, &pair); err != nil || len(pair) != 2 ||
			json.Unmarshal(pair[0], &title) != nil || json.Unmarshal(pair[1], &sents) != nil {
			return Question{}, fmt.Errorf("%s: question %s: context entries must be [title, [sentences]]", qpath, r.ID)
		}
		if err := paras.add(title, sents); err != nil {
			return Question{}, fmt.Errorf("%s: %w", qpath, err)
		}
		q.Pool = append(q.Pool, title)
	}
	gold := map[string]bool{}
	for _, s := range r.Support {
		if len(s) < 1 {
			continue
		}
		if t, ok := s[0].(string); ok && !gold[t] {
			gold[t] = true
			q.Gold = append(q.Gold, t)
		}
	}
	if len(q.Gold) == 0 {
		return Question{}, fmt.Errorf("%s: question %s has no supporting facts", qpath, r.ID)
	}
	return q, nil
}

// paragraphs are HotpotQA's paragraphs by title, in the order first seen.
type paragraphs struct {
	text  map[string]string
	order []string
}

// add keeps a paragraph; one title with two different texts is an error.
func (p *paragraphs) add(title string, sents []string) error {
	text := strings.TrimSpace(strings.Join(sents, ""))
	if old, ok := p.text[title]; ok {
		if old != text {
			return fmt.Errorf("paragraph %q appears with two different texts", title)
		}
		return nil
	}
	p.text[title] = text
	p.order = append(p.order, title)
	return nil
}

// addHotpotCorpus adds the pooled corpus at cpath (the paragraphs of all
// questions), when there is one.
func (p *paragraphs) addHotpotCorpus(cpath string) error {
	var corpus map[string][]string
	if err := readJSON(cpath, &corpus); err != nil {
		if !os.IsNotExist(unwrapAll(err)) {
			return err
		}
		return nil
	}
	titles := make([]string, 0, len(corpus))
	for t := range corpus {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	for _, t := range titles {
		if err := p.add(t, corpus[t]); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
	}
	return nil
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}

// MusiqueDocID is a MuSiQue paragraph's stable id: its title, or, for a
// title shared by several paragraphs, the title and a hash of the text.
func MusiqueDocID(title, text string, shared bool) string {
	if !shared {
		return title
	}
	h := sha256.Sum256([]byte(text))
	return title + " #" + hex.EncodeToString(h[:4])
}

// readMusique reads MuSiQue JSON (questions.json, corpus.json beside it):
// gold = the supporting paragraphs, pooled over the corpus.
func readMusique(path string) (*Dataset, error) {
	qpath, dir := benchFile(path, "questions.json")
	var raw []musiqueRecord
	if err := readJSON(qpath, &raw); err != nil {
		return nil, err
	}
	var corpus []musiqueParagraph
	if err := readJSON(filepath.Join(dir, "corpus.json"), &corpus); err != nil {
		return nil, err
	}
	corpus = withQuestionParagraphs(corpus, raw)
	texts := map[string]map[string]bool{}
	for _, c := range corpus {
		if texts[c.Title] == nil {
			texts[c.Title] = map[string]bool{}
		}
		texts[c.Title][c.Text] = true
	}
	id := func(title, text string) string { return MusiqueDocID(title, text, len(texts[title]) > 1) }
	ds := &Dataset{Setting: "pooled"}
	seen := map[string]bool{}
	for _, c := range corpus {
		d := retrieval.Document{ID: id(c.Title, c.Text), Title: c.Title, Text: c.Text}
		if seen[d.ID] {
			continue // the same paragraph twice
		}
		seen[d.ID] = true
		ds.Corpus = append(ds.Corpus, d)
	}
	for i, r := range raw {
		q, err := r.question(i, qpath, id)
		if err != nil {
			return nil, err
		}
		ds.Questions = append(ds.Questions, q)
	}
	ds.Notes = append(ds.Notes, fmt.Sprintf("MuSiQue pooled setting: every question is searched over all %d paragraphs; a title shared by several paragraphs gets a hash of the text in its id.", len(ds.Corpus)))
	return ds, nil
}

// musiqueRecord is one question of MuSiQue's JSON.
type musiqueRecord struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Answer     string   `json:"answer"`
	Aliases    []string `json:"answer_aliases"`
	Paragraphs []struct {
		Title      string `json:"title"`
		Text       string `json:"paragraph_text"`
		Supporting bool   `json:"is_supporting"`
	} `json:"paragraphs"`
}

// musiqueParagraph is one paragraph of MuSiQue's corpus.json.
type musiqueParagraph struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// withQuestionParagraphs appends to corpus the questions' paragraphs that
// are missing from it.
func withQuestionParagraphs(corpus []musiqueParagraph, raw []musiqueRecord) []musiqueParagraph {
	have := map[musiqueParagraph]bool{}
	for _, c := range corpus {
		have[c] = true
	}
	for _, r := range raw {
		for _, p := range r.Paragraphs {
			if c := (musiqueParagraph{p.Title, p.Text}); !have[c] {
				have[c] = true
				corpus = append(corpus, c)
			}
		}
	}
	return corpus
}

// question is r, the i-th record of qpath, as a Question whose gold is its
// supporting paragraphs' ids.
func (r musiqueRecord) question(i int, qpath string, id func(title, text string) string) (Question, error) {
	if r.ID == "" || r.Question == "" {
		return Question{}, fmt.Errorf("%s: question %d: missing id or question", qpath, i)
	}
	q := Question{ID: r.ID, Question: r.Question, Answers: append([]string{r.Answer}, r.Aliases...), Strata: map[string]string{}}
	hops, _, _ := strings.Cut(r.ID, "__")
	if hops != "" && hops[0] >= '2' && hops[0] <= '9' {
		q.Strata["hops"] = hops[:1] + "-hop"
	}
	for _, p := range r.Paragraphs {
		if p.Supporting {
			q.Gold = append(q.Gold, id(p.Title, p.Text))
		}
	}
	if len(q.Gold) == 0 {
		return Question{}, fmt.Errorf("%s: question %s has no supporting paragraph", qpath, r.ID)
	}
	return q, nil
}
