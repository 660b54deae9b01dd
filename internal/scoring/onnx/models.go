package onnx

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// ModelsConfig says which models to open, and on which runtime.
type ModelsConfig struct {
	Runtime      Config
	Encoder      string // registry name (registry.go); "" is DefaultEncoderName
	EncoderDir   string // the sentence encoder folder
	EncoderBatch int    // texts per encoder call (0: DefaultBatchSize)
	DocTokens    int    // documents are embedded from their first DocTokens word pieces
	// RelationEncoder and RelationEncoderDir name the encoder of path
	// relevance when it is not Encoder ("": Encoder).
	RelationEncoder, RelationEncoderDir string
	// RelProjection maps the encoder's question states into the relation
	// encoder's space (RelProjectionModelFile looked up like the models
	// below), so a request runs one encoder call; empty turns it off.
	RelProjection string
	// GNN and Gate are model files; GNNModelFile and GateModelFile are
	// looked up from the working directory up (the repository root), and
	// empty turns the model off.
	GNN, Gate string
	// RelPrior is the question -> relation prior (RelPriorModelFile looked
	// up like them); empty turns it off.
	RelPrior string
	// EvidenceGate is the evidence-aware gate (option gate=evidence;
	// EvidenceGateModelFile looked up like them); empty turns it off.
	EvidenceGate string
	// Ranker is the learned ranker of the final pool (option final_rank
	// learned; RankerModelFile looked up like them); empty turns it off.
	Ranker string
}

// Models are the runtime's sentence encoder (for queries, and truncated for
// documents), Siamese GNN and gate. A GNN or gate that is off is nil: the
// pipeline then uses the GED heuristic or fixed weights and says so in
// every response's fallbacks.
type Models struct {
	Encoder    *Encoder // queries (query prefix)
	DocEncoder *Encoder // documents at load time (same session, truncated, passage prefix)
	// RelationEncoder matches questions to relation texts (path relevance;
	// query side for both); Encoder unless configured apart.
	RelationEncoder *Encoder
	// Questions encodes a question once for the search and, projected,
	// for path relevance; nil: the relation encoder encodes it itself.
	Questions    *QuestionEncoder
	GNN          scoring.GraphEncoder
	Gate         scoring.Gate
	RelPrior     pathrel.Prior        // nil: option path_prior falls back to the cosine alone
	EvidenceGate scoring.EvidenceGate // nil: option gate=evidence falls back to fixed weights
	Ranker       scoring.Ranker       // nil: option final_rank learned falls back to boost
	evGatePath   string
	rankerPath   string
	gnnPath      string
	gatePath     string
	relPriorPath string
	relProjPath  string
	closers      []func() error
}

// Close frees the models' sessions.
func (m *Models) Close() {
	for _, c := range m.closers {
		_ = c()
	}
}

// OpenModels opens the runtime and the models of c. An explicit GNN or gate
// path that does not exist is an error; the committed gate, missing, is a
// warning on log and fixed weights.
func OpenModels(c ModelsConfig, log *slog.Logger) (*Models, error) {
	rt, err := Open(c.Runtime)
	if err != nil {
		return nil, fmt.Errorf("%w (run scripts/setup.sh, or set DMAR_ORT_LIB)", err)
	}
	opts := []EncoderOption{WithEncoderName(c.Encoder)}
	if c.EncoderBatch != 0 {
		opts = append(opts, WithBatchSize(c.EncoderBatch))
	}
	enc, err := NewEncoder(rt, c.EncoderDir, opts...)
	if err != nil {
		return nil, err
	}
	m := &Models{Encoder: enc, DocEncoder: enc.Truncated(c.DocTokens).Passage(), RelationEncoder: enc, gnnPath: c.GNN, gatePath: c.Gate, relPriorPath: c.RelPrior, relProjPath: c.RelProjection, evGatePath: c.EvidenceGate, rankerPath: c.Ranker, closers: []func() error{enc.Close}}
	if c.RelationEncoder != "" && c.RelationEncoder != enc.spec.Name {
		rel, err := NewEncoder(rt, c.RelationEncoderDir, WithEncoderName(c.RelationEncoder))
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("relation encoder: %w", err)
		}
		m.RelationEncoder = rel
		m.closers = append(m.closers, rel.Close)
		log.Info("relation encoder loaded", "name", rel.Version())
	}
	if err := m.openRelProjection(rt, log); err != nil {
		m.Close()
		return nil, err
	}
	if err := m.openStructural(rt, log); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func (m *Models) openStructural(rt *Runtime, log *slog.Logger) error {
	if path := m.gnnPath; path != "" {
		if path == GNNModelFile {
			path = DefaultGNNPath()
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("gnn model: %w (set --gnn, or --gnn '' for the GED heuristic)", err)
		}
		g, err := NewGraphEncoder(rt, path)
		if err != nil {
			return err
		}
		m.GNN = g
		m.closers = append(m.closers, g.Close)
		log.Info("gnn loaded", "path", path, "version", g.Version())
	}
	if err := m.openGate(rt, log); err != nil {
		return err
	}
	if err := m.openEvidenceGate(rt, log); err != nil {
		return err
	}
	if err := m.openRanker(rt, log); err != nil {
		return err
	}
	return m.openRelPrior(rt, log)
}

// trainedModel is a model trained on one encoder's scores or vectors.
type trainedModel interface {
	Encoder() string
	Version() string
	Close() error
}

// openTrained opens a model trained on one encoder's scores (the gate, the
// evidence gate, the ranker). Left at committed it is the committed model of
// the configured encoder (fileFor), and a missing one is left off with a
// warning that says what happens instead; a model trained on another
// encoder would read scores it never saw: the committed one is left off
// with a warning, a named one is an error. It returns nil for off.
func openTrained[T trainedModel](m *Models, pathp *string, committed string, fileFor func(string) string, what, dir, instead string,
	open func(string) (T, error), log *slog.Logger) (T, error) {
	var none T
	file, def := m.committedFor(pathp, committed, fileFor)
	path, err := optionalModel(*pathp, file, func() string { return findUp(file) }, what+" model", dir, instead, log)
	if path == "" || err != nil {
		return none, err
	}
	g, err := open(path)
	if err != nil {
		return none, err
	}
	if keep, err := trainedFor(what, dir, path, g.Encoder(), m.Encoder.spec.Name, def, instead, log); !keep {
		g.Close()
		return none, err
	}
	m.closers = append(m.closers, g.Close)
	log.Info(what+" loaded", "path", path, "version", g.Version(), "encoder", g.Encoder())
	return g, nil
}

// openGate opens the gate (the paper's); off, fixed weights are used.
func (m *Models) openGate(rt *Runtime, log *slog.Logger) error {
	g, err := openTrained(m, &m.gatePath, GateModelFile, GateFileFor, "gate", "gate",
		"fixed weights are used and responses say so (models/gate/README.md says how to train one)",
		func(p string) (*Gate, error) { return NewGate(rt, p) }, log)
	if g != nil {
		m.Gate = g
	}
	return err
}

// openEvidenceGate opens the evidence-aware gate; off, option gate=evidence
// says so per request.
func (m *Models) openEvidenceGate(rt *Runtime, log *slog.Logger) error {
	g, err := openTrained(m, &m.evGatePath, EvidenceGateModelFile, EvidenceGateFileFor, "evidence gate", "evgate",
		"option gate=evidence falls back to fixed weights",
		func(p string) (*EvidenceGate, error) { return NewEvidenceGate(rt, p) }, log)
	if g != nil {
		m.EvidenceGate = g
	}
	return err
}

// openRanker opens the learned ranker; off, option final_rank learned says
// so per request and ranks as final_rank boost.
func (m *Models) openRanker(rt *Runtime, log *slog.Logger) error {
	r, err := openTrained(m, &m.rankerPath, RankerModelFile, RankerFileFor, "ranker", "ranker",
		"option final_rank learned falls back to the boosted fused score",
		func(p string) (*Ranker, error) { return NewRanker(rt, p) }, log)
	if r != nil {
		m.Ranker = r
	}
	return err
}

// committedFor resolves a path setting left at committed, the committed
// model's name, to the committed model of the configured encoder (fileFor);
// def says it was, and the setting then names that file (for reports).
func (m *Models) committedFor(path *string, committed string, fileFor func(string) string) (file string, def bool) {
	file = fileFor(m.Encoder.spec.Name)
	if *path != committed {
		return file, false
	}
	*path = file
	return file, true
}

// trainedFor says whether a model trained on encoder trained (its
// metadata; "" unrecorded) may serve encoder enc. Another encoder's model
// would read vectors or cosines it never saw: the committed one (def) is
// left off with a warning that says what happens instead, a named one is an
// error that says how to train one (models/DIR/train.sh).
func trainedFor(what, dir, path, trained, enc string, def bool, instead string, log *slog.Logger) (bool, error) {
	if trained == "" || trained == enc {
		return true, nil
	}
	if !def {
		return false, fmt.Errorf("%s model %s was trained on %s, but the encoder is %s: train one for it (DMAR_ENCODER=%s bash models/%s/train.sh) or run with --%s ''", what, path, trained, enc, enc, dir, dir)
	}
	log.Warn("the committed "+what+" was trained on another encoder; "+instead, "path", path, "trained_on", trained, "encoder", enc)
	return false, nil
}

// optionalModel resolves the path of a model that may be off: "" is off;
// the committed file def is looked up by find and, missing, left off with a
// warning that says what then happens (instead); any other path must exist.
// It returns the path to open, or "" for off.
func optionalModel(path, def string, find func() string, what, flag, instead string, log *slog.Logger) (string, error) {
	if path == "" {
		return "", nil
	}
	isDef := path == def
	if isDef {
		path = find()
	}
	if _, err := os.Stat(path); err != nil {
		if !isDef {
			return "", fmt.Errorf("%s: %w (set --%s, or --%s '' to turn it off)", what, err, flag, flag)
		}
		log.Warn(what+" not found; "+instead, "path", path)
		return "", nil
	}
	return path, nil
}

// openRelPrior opens the relation prior; a missing default model or one
// trained on another encoder's vectors is left off with a warning (the
// option path_prior then says so per request).
func (m *Models) openRelPrior(rt *Runtime, log *slog.Logger) error {
	path, err := optionalModel(m.relPriorPath, RelPriorModelFile, DefaultRelPriorPath, "relation prior model", "relprior",
		"option path_prior falls back to the cosine alone", log)
	if path == "" || err != nil {
		return err
	}
	p, err := NewRelPrior(rt, path)
	if err != nil {
		return err
	}
	if p.encoder != "" && p.encoder != m.RelationEncoder.spec.Name {
		p.Close()
		log.Warn("relation prior trained on another encoder's vectors; left off", "path", path, "trained_on", p.encoder, "relation_encoder", m.RelationEncoder.spec.Name)
		return nil
	}
	m.RelPrior = p
	m.closers = append(m.closers, p.Close)
	log.Info("relation prior loaded", "path", path, "version", p.Version())
	return nil
}

// InUse says which encoder, GNN and gate are open, for reports.
func (m *Models) InUse() []string {
	out := []string{"encoder " + m.Encoder.Version()}
	if m.RelationEncoder != nil && m.RelationEncoder != m.Encoder {
		out = append(out, "relation encoder "+m.RelationEncoder.Version()+" (path relevance)")
	}
	if m.Questions != nil {
		out = append(out, "relation projection "+m.Questions.proj.Version()+" (questions encoded once)")
	}
	if m.GNN != nil {
		out = append(out, "GNN "+m.GNN.Version())
	} else {
		out = append(out, fmt.Sprintf("no GNN (%q not loaded): structure \"gnn\" ran the GED heuristic (fallback gnn_unavailable)", m.gnnPath))
	}
	if m.Gate != nil {
		out = append(out, "gate "+m.Gate.Version()+" ("+m.gatePath+")")
	} else {
		out = append(out, fmt.Sprintf("no gate (%q not loaded): fixed weights 0.5/0.5 (fallback gate_unavailable)", m.gatePath))
	}
	if m.EvidenceGate != nil {
		out = append(out, "evidence gate "+m.EvidenceGate.Version()+" ("+m.evGatePath+", option gate=evidence)")
	}
	if m.Ranker != nil {
		out = append(out, "ranker "+m.Ranker.Version()+" ("+m.rankerPath+", option final_rank learned)")
	}
	return out
}
