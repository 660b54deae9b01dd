package pipeline

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/vec"
)

// The learned final ranking (option final_rank learned, beyond the paper):
// the graph adds to the text retrieval, it does not replace it. The final
// pool holds every candidate the request found, the stage-1 search's (Q),
// the stage-2 search's (Q'), the graph channel's, and the pages of the
// entities Q names; a learned ranker (scoring.Ranker) orders it from each
// candidate's text and graph evidence and from what the request knows of
// itself: how sure the linking is, how well a relation matched Q, whether
// the channel's documents agree with the text search, whether Q is a
// question or a claim. With final_rank boost the order is phase 4's fused
// score plus graph_boost x the graph score, under which the channel's
// documents always lead.

// Final ranking modes (option final_rank).
const (
	FinalRankBoost   = "boost"
	FinalRankLearned = "learned"
)

// finalRanker is the final ranking stage: the final pool ordered by the
// learned ranker, fused with the text channel's order (fusion.fuseText),
// the pages the best document names lifted (titlelinks.go). It reads the
// ranker, the index (the query entities' own pages), its own options and
// the fusion it is given; of the request, the query, the trace and the
// ranker-input log.
type finalRanker struct {
	ranker  scoring.Ranker // nil: the fused order stands
	index   retrieval.Index
	fuse    fusion
	query   string
	trace   *trace
	ranklog *rankLog // nil: not collected
	rankOptions
}

// rankOptions are the final ranking's options.
type rankOptions struct {
	FinalRank  string // boost ("") | learned
	K          int
	TitleLinks int // pages the best document names lifted after it; 0: off
	NoOwnPages bool
	Filter     retrieval.Filter
}

func (o rankOptions) validate() error {
	if err := errs.IntIn("title_links", o.TitleLinks, 0, 10); err != nil {
		return err
	}
	return errs.OneOf("final_rank", o.FinalRank, "", FinalRankBoost, FinalRankLearned)
}

// rankOptions are the final ranking's settings in o.
func (o Options) rankOptions() rankOptions {
	return rankOptions{FinalRank: o.FinalRank, K: o.K, TitleLinks: o.TitleLinks, NoOwnPages: o.NoOwnPages, Filter: o.Filter}
}

// finalRanker is the request's final ranking; ranklog
// collects the ranker's inputs (nil: not collected).
func (r request) finalRanker(ranklog *rankLog) finalRanker {
	p, o, query, tr := r.p, r.opts, r.query, r.trace
	return finalRanker{ranker: p.cfg.Ranker, index: p.cfg.Index, fuse: o.fusion(), query: query, trace: tr, ranklog: ranklog, rankOptions: o.rankOptions()}
}

// poolDoc is one candidate of the final pool and where it was found.
type poolDoc struct {
	doc            Doc
	rank1, rank2   int // 1-based ranks in the stage-1 and stage-2 searches; 0: not a hit
	score1, score2 float64
	ent            float64 // DMAR's raw structural score (0 when unscored)
}

// searchHits are a stage's candidates: the search's own hits first, then
// the graph channel's documents not among them (mergeHits).
type searchHits struct {
	hits   []retrieval.Hit
	search int // len of the search's own prefix
}

// rankFinal orders the final pool with the learned ranker when the request
// asks for it (final_rank learned) and one is loaded; else it keeps fin.
func (fr finalRanker) rankFinal(ctx context.Context, sc scored, anchors []Doc, second searchHits, fin reranked) (reranked, error) {
	learned := fr.FinalRank == FinalRankLearned
	if !learned && fr.ranklog == nil {
		return fin, nil
	}
	t := time.Now()
	pool, err := fr.finalPool(ctx, sc, second, fin)
	if err != nil {
		return reranked{}, err
	}
	in := fr.rankInputs(sc, pool)
	if fr.ranklog != nil {
		for i, p := range pool {
			fr.ranklog.rows = append(fr.ranklog.rows, RankRow{ID: p.doc.ID, Input: in[i]})
		}
	}
	if !learned {
		return fin, nil
	}
	if fr.ranker == nil {
		fr.trace.fallback("ranker_unavailable", "no ranker model is configured: the final order is the fused score plus graph_boost x the graph score")
		return fin, nil
	}
	own, err := fr.ranker.Scores(ctx, in)
	if err != nil {
		return reranked{}, fmt.Errorf("ranker: %w", err)
	}
	scores := fr.fuse.fuseText(sc.channels.text, pool, fr.fuse.fuseKG(sc.channels.kg, pool, own))
	order := poolOrder(pool, scores)
	namedBy := titleLinks(pool, order, scores, fr.TitleLinks)
	isAnchor, inFirst := map[string]bool{}, map[string]bool{}
	for _, a := range anchors {
		isAnchor[a.ID] = true
	}
	for _, h := range sc.hits {
		inFirst[h.Doc.ID] = true
	}
	docs := []Doc{}
	for n, i := range order {
		if n == fr.K {
			break
		}
		p := pool[i]
		d := p.doc
		d.Rank, d.Score = n+1, scores[i]
		d.Breakdown.InFirst, d.Breakdown.Anchor = inFirst[d.ID], isAnchor[d.ID]
		d.Breakdown.Rank = &RankBreakdown{Score: scores[i], RankerScore: own[i], TextRank: sc.channels.text.Docs[d.ID].Rank, Stage1Rank: p.rank1, Stage2Rank: p.rank2, GraphRank: sc.channels.kg.RankOf(d.ID), Own: in[i].Own > 0, NamedBy: namedBy[i]}
		docs = append(docs, d)
	}
	fr.trace.timed("final_rank", t)
	fin.docs = docs
	return fin, nil
}

// finalPool is every candidate of the request once: phase 4's scored
// documents (the stage-2 search's and the channel's), then phase 2's (the
// stage-1 search's), then the pages of Q's linked entities that neither
// search nor the channel found, fetched and scored semantically here.
func (fr finalRanker) finalPool(ctx context.Context, sc scored, second searchHits, fin reranked) ([]poolDoc, error) {
	rank1, score1 := searchRanks(sc.hits[:sc.search])
	rank2, score2 := searchRanks(second.hits[:second.search])
	var pool []poolDoc
	seen := map[string]bool{}
	add := func(d Doc) {
		if seen[d.ID] {
			return
		}
		seen[d.ID] = true
		pool = append(pool, poolDoc{doc: d, rank1: rank1[d.ID], rank2: rank2[d.ID], score1: score1[d.ID], score2: score2[d.ID], ent: d.Breakdown.Structural})
	}
	for _, d := range fin.all {
		add(d)
	}
	for _, d := range sc.docs {
		add(d)
	}
	var missing []string
	if fr.NoOwnPages {
		return pool, nil
	}
	for _, q := range kg.QIDs(sc.mentions) {
		if !seen[q] {
			missing = append(missing, q)
		}
	}
	if len(missing) == 0 {
		return pool, nil
	}
	own, err := fr.index.Documents(ctx, missing)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fr.trace.fallback("own_pages_unavailable", "fetching the pages of the query's entities failed, the final pool goes without them: "+err.Error())
		return pool, nil
	}
	keep := fr.Filter.Matcher()
	qc := vec.NewCosiner(sc.qvec)
	for _, d := range own {
		if !keep(d) {
			continue
		}
		doc := Doc{ID: d.ID, Title: d.Title, Text: d.Text, Entities: d.Entities, Breakdown: Breakdown{Stage: "own"}}
		if len(d.Vector) > 0 {
			doc.Breakdown.Semantic = qc.Cosine(d.Vector)
		}
		add(doc)
	}
	return pool, nil
}

// poolOrder is the pool's indexes by score, best first (ties: document ID).
func poolOrder(pool []poolDoc, scores []float64) []int {
	order := make([]int, len(pool))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if scores[i] != scores[j] {
			return scores[i] > scores[j]
		}
		return pool[i].doc.ID < pool[j].doc.ID
	})
	return order
}

// searchRanks are each hit's 1-based rank and score.
func searchRanks(hits []retrieval.Hit) (map[string]int, map[string]float64) {
	rank, score := make(map[string]int, len(hits)), make(map[string]float64, len(hits))
	for i, h := range hits {
		if _, ok := rank[h.Doc.ID]; !ok {
			rank[h.Doc.ID], score[h.Doc.ID] = i+1, h.Score
		}
	}
	return rank, score
}

// rankInputs are the ranker's inputs for the pool: scoring.RankInput per
// candidate, the request-level fields shared.
func (fr finalRanker) rankInputs(sc scored, pool []poolDoc) []scoring.RankInput {
	sem, ent := make([]float64, len(pool)), make([]float64, len(pool))
	bestSem := math.Inf(-1)
	for i, p := range pool {
		sem[i], ent[i] = p.doc.Breakdown.Semantic, p.ent
		bestSem = max(bestSem, sem[i])
	}
	zs, ze := scoring.ZScores(sem), scoring.ZScores(ent)
	conf := linkConfidence(sc.mentions)
	q := scoring.RankInput{Linked: len(conf), Question: isQuestion(fr.query)}
	for _, c := range conf {
		q.LinkConfMax = max(q.LinkConfMax, c)
	}
	ch := &sc.channels.kg
	q.ChannelDocs = len(ch.Hits)
	for _, gp := range ch.Paths {
		q.ChannelBestRel = max(q.ChannelBestRel, gp.Relevance)
	}
	q.Agreement = agreement(ch.Hits, sc.hits[:sc.search])
	qc := vec.NewCosiner(sc.qvec)
	for _, h := range sc.hits[:sc.search] {
		if len(h.Doc.Vector) > 0 {
			q.TextBestSemantic = max(q.TextBestSemantic, qc.Cosine(h.Doc.Vector))
		}
	}
	for _, p := range pool {
		if _, own := conf[p.doc.ID]; own && p.rank1 > 0 {
			q.OwnInvRank1 = max(q.OwnInvRank1, 1/float64(p.rank1))
		}
	}
	out := make([]scoring.RankInput, len(pool))
	for i, p := range pool {
		x := q
		x.Semantic, x.ZSemantic, x.SemanticGap = sem[i], zs[i], sem[i]-bestSem
		x.Search1, x.Search2 = p.score1, p.score2
		x.InvRank1, x.InvRank2 = invRank(p.rank1), invRank(p.rank2)
		if gp, ok := ch.Paths[p.doc.ID]; ok {
			x.Reached, x.Graph, x.PathRelevance = true, gp.Score, gp.Relevance
			x.InvRank, x.TwoHop = invRank(ch.RankOf(p.doc.ID)), len(gp.Steps) > 1
		}
		x.Own = conf[p.doc.ID]
		x.ZStructural = ze[i]
		out[i] = x
	}
	return out
}

func invRank(rank int) float64 {
	if rank <= 0 {
		return 0
	}
	return 1 / float64(rank)
}

// agreement is the share of the channel's ten best documents among the
// text search's twenty best (0 when the channel found none).
func agreement(channel, search []retrieval.Hit) float64 {
	top := map[string]bool{}
	for i := 0; i < len(search) && i < 20; i++ {
		top[search[i].Doc.ID] = true
	}
	n, hit := 0, 0
	for i := 0; i < len(channel) && i < 10; i++ {
		n++
		if top[channel[i].Doc.ID] {
			hit++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(hit) / float64(n)
}

// whWords open a question (an English one); a text without one or a
// question mark is a claim or a lookup, which is about its own subject.
var whWords = map[string]bool{"who": true, "whom": true, "whose": true, "what": true, "which": true, "where": true,
	"when": true, "why": true, "how": true, "name": true, "list": true, "whats": true, "whos": true, "wheres": true}

// isQuestion says Q asks something: it holds a question mark, or one of
// its first three words is a wh-word.
func isQuestion(q string) bool {
	if strings.Contains(q, "?") {
		return true
	}
	for i, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '\'') }) {
		if i == 3 {
			break
		}
		if whWords[strings.ReplaceAll(w, "'", "")] {
			return true
		}
	}
	return false
}

// RankRow is one candidate of the final pool as the learned ranker sees it:
// its training row (dmar gate ranker).
type RankRow struct {
	ID    string
	Input scoring.RankInput
}

// rankLog collects a request's RankRows (nil: not collected).
type rankLog struct{ rows []RankRow }

// RetrieveRanked runs Retrieve and also returns every candidate of the
// final pool with the ranker's inputs (whichever final_rank the request
// asks for: the pool is the same): the learned ranker's training data.
func (p *Pipeline) RetrieveRanked(ctx context.Context, query string, opts Options) (*Result, []RankRow, error) {
	log := &rankLog{}
	res, err := p.retrieveLogged(ctx, query, opts, nil, log)
	if err != nil {
		return nil, nil, err
	}
	return res, log.rows, nil
}
