package ui_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg/neo4jtest"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/ui"
)

// The explorer page in a real headless Chromium against a real dmar serve on
// codexm-film, without and with an API key. DMAR_UI_SCREENSHOT=FILE.png
// writes the page, as the first run leaves it after the Nolan question, to
// FILE.png (the README's docs/ui-explorer.png).
func TestExplorerInBrowser(t *testing.T) {
	chromiumPath = chromium(t)
	chrome := chromiumPath
	if !ui.HasGraphLibrary() {
		need(t, "the graph library is not embedded (internal/ui/static/"+ui.GraphLibrary+"): run scripts/setup/40-ui.sh")
	}
	onnxtest.NeedEncoders(t, "")
	data, err := datapath.Dataset("codexm-film")
	if err != nil {
		need(t, "codexm-film: "+err.Error())
	}
	films := directedBy(t, filepath.Join(data, "triples.tsv"), "Q25191")
	bin := buildDmar(t)
	for _, key := range []string{"", "explorer-key-0123456789abcdef"} {
		name := "no key"
		if key != "" {
			name = "api key"
		}
		t.Run(name, func(t *testing.T) {
			s := serve(t, bin, data, key)
			p := openPage(t, chrome)
			p.do(chromedp.Navigate(s.url + "/"))
			p.wait(`document.body.dataset.ready === 'true'`)
			if missing := run(p, chromedp.Evaluate[bool](`document.getElementById('lib-missing').hidden`)); !missing {
				t.Error("the page says that the graph library is missing")
			}
			ans := askNolan(t, p, s, films, "")
			checkGraph(t, p, ans)
			expandNode(t, p, s)
			if shot := os.Getenv("DMAR_UI_SCREENSHOT"); shot != "" && key == "" {
				if err := os.WriteFile(shot, run(p, chromedp.CaptureScreenshot()), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s", shot)
			}
			compare(t, p, s)
			liveDocument(t, p, s)
			badQuestion(t, p, s)
			if key != "" {
				// A link to a question asks it on opening, and the key
				// asked once serves the whole session: no second prompt.
				p.do(chromedp.Navigate(s.url + "/ui/?q=Who+directed+Inception%3F&k=3"))
				p.wait(`document.querySelectorAll('#results .result').length === 3`)
				if !run(p, chromedp.Evaluate[bool](`document.getElementById('key-form').hidden`)) {
					t.Error("the page asked for the key again in the same session")
				}
				// The key lives in this tab's session storage only.
				got := run(p, chromedp.Evaluate[[]any](`[sessionStorage.getItem('dmar.apiKey'), localStorage.length, document.cookie]`))
				if got[0] != key || got[1] != 0.0 || got[2] != "" {
					t.Errorf("session storage, local storage, cookies: %v; want the key, 0, \"\"", got)
				}
			}
			p.checkTraffic(t, s)
		})
	}
	t.Run("neo4j", func(t *testing.T) { neo4jLinks(t, bin, data, films) })
}

// neo4jLinks: with Neo4j as the graph, the page links the drawn subgraph
// and the results' paths to Neo4j Browser; the statements in the links,
// run on that Neo4j, return exactly what the page drew and the paths.
func neo4jLinks(t *testing.T, bin, data string, films map[string]bool) {
	uri := os.Getenv("DMAR_NEO4J_URI")
	if uri == "" {
		need(t, "DMAR_NEO4J_URI is unset: scripts/services.sh start neo4j and export it (scripts/test.sh does)")
	}
	neo4jtest.Exclusive(t, uri)
	load := exec.Command(bin, "load", "kg", "--graph", uri, "--data", data, "--quiet")
	load.Env = append(os.Environ(), "DMAR_STATE="+filepath.Join(t.TempDir(), "state"))
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("dmar load kg: %v\n%s", err, out)
	}
	s := serve(t, bin, data, "", "--graph", uri)
	p := openPage(t, chromiumPath)
	p.do(chromedp.Navigate(s.url + "/"))
	p.wait(`document.body.dataset.ready === 'true'`)
	// The paper's method: G_Q and the anchors' subgraphs are drawn, so
	// both links are checked (the dmar preset has paths only; no_key).
	ans := askNolan(t, p, s, films, "paper")
	checkGraph(t, p, ans)
	p.wait(`!document.getElementById('neo4j').hidden`)
	if ans.Neo4j == nil {
		t.Fatal("the paper method's response has no subgraph statement")
	}
	auth := neo4j.NoAuth()
	if pw := os.Getenv("DMAR_NEO4J_PASSWORD"); pw != "" {
		auth = neo4j.BasicAuth(cmp.Or(os.Getenv("DMAR_NEO4J_USER"), "neo4j"), pw, "")
	}
	drv, err := neo4j.NewDriverWithContext(uri, auth)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	statement := func(link string) []*neo4j.Record {
		t.Helper()
		u, err := url.Parse(link)
		if err != nil || u.Query().Get("cmd") != "edit" || u.Port() != "7474" {
			t.Fatalf("link %s: want Neo4j Browser on port 7474 with cmd=edit", link)
		}
		res, err := neo4j.ExecuteQuery(context.Background(), drv, u.Query().Get("arg"), nil, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatalf("the link's statement: %v\n%s", err, u.Query().Get("arg"))
		}
		return res.Records
	}
	// The subgraph link: the nodes of the subgraphs drawn (not the path-only ones).
	want := map[string]bool{}
	for _, sg := range ans.QuerySubgraphs {
		for _, n := range sg.Nodes {
			want[n.QID] = true
		}
	}
	for _, a := range ans.Anchors {
		for _, sg := range a.Subgraphs {
			for _, n := range sg.Nodes {
				want[n.QID] = true
			}
		}
	}
	// The dmar preset computes neither G_Q nor anchors: no subgraph is
	// drawn, and the page links only the paths.
	hidden := run(p, chromedp.Evaluate[bool](`document.getElementById('neo4j-open').hidden`))
	switch {
	case len(want) == 0 && ans.Neo4j != nil:
		t.Errorf("no subgraph drawn, but the response has a subgraph statement")
	case len(want) == 0 && !hidden:
		t.Errorf("no subgraph drawn, but the page shows a subgraph link")
	case len(want) > 0:
		got := map[string]bool{}
		for _, r := range statement(run(p, chromedp.Evaluate[string](`document.getElementById('neo4j-open').href`))) {
			nodes, _ := r.Get("nodes")
			for _, n := range nodes.([]any) {
				got[n.(neo4j.Node).Props["qid"].(string)] = true
			}
		}
		if d := diff(keys(want), keys(got)); d != "" {
			t.Errorf("the Browser link's subgraph against the drawn subgraphs: %s", d)
		}
	}
	// The paths link: one row per path of the response's statement, each with its edges.
	if ans.Neo4jPaths == nil {
		t.Fatal("the response has no neo4j_paths")
	}
	paths := ans.Neo4jPaths.Params["paths"].([]any)
	rows := statement(run(p, chromedp.Evaluate[string](`document.getElementById('neo4j-paths-open').href`)))
	if len(rows) != len(paths) {
		t.Fatalf("the paths link returns %d rows for %d paths", len(rows), len(paths))
	}
	for i, r := range rows {
		path := paths[i].(map[string]any)
		name, _ := r.Get("name")
		rels, _ := r.Get("rels")
		if name != path["name"] || len(rels.([]any)) != len(path["edges"].([]any)) {
			t.Errorf("path %d: row %v with %d relationships, want %v with %d", i, name, len(rels.([]any)), path["name"], len(path["edges"].([]any)))
		}
	}
	p.checkTraffic(t, s)
}

// askNolan asks the Nolan question with k=5 (answering the key prompt when
// the server wants one) and checks the page against the server's own answer
// and against the data: five films Nolan directed, each with its path.
func askNolan(t *testing.T, p *page, s *server, films map[string]bool, method string) api.RetrieveResponse {
	t.Helper()
	const q = "Which films did Christopher Nolan direct?"
	if method != "" {
		p.do(chromedp.SetValue(chromedp.ID("method-a"), method))
	}
	p.do(chromedp.SendKeys(chromedp.ID("question"), q), chromedp.SendKeys(chromedp.ID("k-a"), "5"), chromedp.Click(chromedp.ID("ask")))
	if s.key != "" {
		p.wait(`!document.getElementById('key-form').hidden`)
		why := run(p, chromedp.Text(chromedp.ID("key-why")))
		var e api.ErrorBody
		if code := s.send(t, "POST", "/v1/link", `{"text": "x"}`, false, &e); code != 401 || !strings.Contains(why, e.Error.Message) {
			t.Errorf("the key prompt says %q; the server's 401 (%d) says %q", why, code, e.Error.Message)
		}
		p.do(chromedp.SendKeys(chromedp.ID("key-input"), s.key), chromedp.Click(chromedp.CSS(`#key-form button[type=submit]`)))
	}
	p.wait(`document.querySelectorAll('#results .result').length > 0`)
	var want api.RetrieveResponse
	body := `{"query": "` + q + `", "k": 5}`
	if method != "" {
		body = `{"query": "` + q + `", "k": 5, "method": "` + method + `"}`
	}
	s.ok(t, "POST", "/v1/retrieve", body, &want)
	type shown struct {
		ID, Title, Carried string
	}
	var got []shown
	run(p, evalInto(`[...document.querySelectorAll('#results .result')].map(li => ({ID: li.dataset.id,
		Title: li.querySelector('.title').textContent, Carried: li.querySelector('.carried').textContent}))`, &got))
	if len(got) != 5 || len(want.Results) != 5 {
		t.Fatalf("the page shows %d documents, the server returns %d; want 5", len(got), len(want.Results))
	}
	named := 0
	for i, d := range want.Results {
		g := got[i]
		if g.ID != d.ID || g.Title != d.Title {
			t.Errorf("result %d: the page shows %s %q, the server returns %s %q", i+1, g.ID, g.Title, d.ID, d.Title)
		}
		// The paper's method ranks Nolan's own page (an anchor) among
		// them; the default answers with the films alone.
		if method == "paper" && d.ID == "Q25191" {
			continue
		}
		if !films[d.ID] {
			t.Errorf("result %d: %s %q is not a film directed by Christopher Nolan (Q25191) in triples.tsv", i+1, d.ID, d.Title)
		}
		// The path that carried it: film -[director]-> Nolan, walked from Nolan.
		found := false
		for _, np := range d.Breakdown.Paths {
			if len(np.Steps) == 1 && np.Steps[0].PID == "P57" && np.From == "Q25191" && np.To == d.ID {
				found = true
				if !strings.Contains(g.Carried, np.Text) {
					t.Errorf("result %d (%s): the page does not show its path %q: %q", i+1, d.Title, np.Text, g.Carried)
				}
			}
		}
		if !found {
			t.Errorf("result %d (%s): no director path from Q25191 among %+v", i+1, d.Title, d.Breakdown.Paths)
		}
		// A page the first result's text names says so (title_links).
		if r := d.Breakdown.Rank; r != nil && r.NamedBy != "" {
			named++
			if !strings.Contains(g.Carried, "title link: the text of "+want.Results[0].Title+" names this page") {
				t.Errorf("result %d (%s), named by %s: the page does not say so: %q", i+1, d.Title, r.NamedBy, g.Carried)
			}
		}
	}
	if method == "" && named == 0 {
		t.Errorf("the default lifted no page the first result (%s) names: %+v", want.Results[0].Title, want.Results)
	}
	type entity struct{ QID, Confidence string }
	var ents []entity
	run(p, evalInto(`[...document.querySelectorAll('#entities tr.entity')].map(tr => ({QID: tr.dataset.qid, Confidence: tr.cells[3].textContent}))`, &ents))
	if len(ents) != len(want.QueryEntities) {
		t.Fatalf("the page lists entities %+v, the server %+v", ents, want.QueryEntities)
	}
	for i, e := range want.QueryEntities {
		conf := "–"
		if e.Confidence != 0 {
			conf = fmt.Sprintf("%.3f", e.Confidence)
		}
		if ents[i].QID != e.QID || ents[i].Confidence != conf {
			t.Errorf("linked entity %d: the page shows %+v, the server %s confidence %s", i, ents[i], e.QID, conf)
		}
	}
	if !slices.ContainsFunc(want.QueryEntities, func(e api.QueryEntity) bool { return e.QID == "Q25191" }) {
		t.Errorf("Christopher Nolan (Q25191) is not linked: %+v", want.QueryEntities)
	}
	return want
}

type drawn struct {
	Nodes []struct {
		ID      string
		Label   string
		Classes []string
		X, Y    float64
	}
	Edges []struct {
		ID      string
		Label   string
		Classes []string
	}
	Expanded []string
}

func (g drawn) nodeIDs() []string {
	var out []string
	for _, n := range g.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func (g drawn) edgeIDs() []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, e.ID)
	}
	return out
}

func readGraph(t *testing.T, p *page) drawn {
	t.Helper()
	var g drawn
	run(p, evalInto(`dmarExplorer.graph()`, &g))
	return g
}

// checkGraph: the canvas holds exactly the question's and the anchors'
// subgraphs and the results' paths, with the question's entity, the
// documents, the hubs and the path edges marked, and it is drawn.
func checkGraph(t *testing.T, p *page, ans api.RetrieveResponse) {
	t.Helper()
	wantNodes, wantEdges := map[string]bool{}, map[string]bool{}
	hubs := map[string]bool{}
	sgs := slices.Clone(ans.QuerySubgraphs)
	for _, a := range ans.Anchors {
		sgs = append(sgs, a.Subgraphs...)
	}
	for _, sg := range sgs {
		for _, n := range sg.Nodes {
			wantNodes[n.QID] = true
			hubs[n.QID] = hubs[n.QID] || n.Hub
		}
		for _, e := range sg.Edges {
			wantEdges[e.From+"|"+e.PID+"|"+e.To] = true
		}
	}
	pathEdges := map[string]bool{}
	for _, d := range ans.Results {
		steps := []api.GraphStep{}
		for _, np := range d.Breakdown.Paths {
			steps = append(steps, np.Steps...)
		}
		if d.Breakdown.Graph != nil {
			steps = append(steps, d.Breakdown.Graph.Steps...)
		}
		for _, st := range steps {
			from, to := st.From, st.To
			if st.Backward {
				from, to = to, from
			}
			id := from + "|" + st.PID + "|" + to
			wantNodes[from], wantNodes[to], wantEdges[id], pathEdges[id] = true, true, true, true
		}
	}
	g := readGraph(t, p)
	if d := diff(keys(wantNodes), g.nodeIDs()); d != "" {
		t.Errorf("nodes on the canvas: %s", d)
	}
	if d := diff(keys(wantEdges), g.edgeIDs()); d != "" {
		t.Errorf("edges on the canvas: %s", d)
	}
	results := map[string]bool{}
	for _, d := range ans.Results {
		results[d.ID] = true
	}
	for _, n := range g.Nodes {
		if (n.ID == "Q25191") != slices.Contains(n.Classes, "query") {
			t.Errorf("node %s: classes %v (the question's entity is Q25191)", n.ID, n.Classes)
		}
		if hubs[n.ID] != slices.Contains(n.Classes, "hub") || results[n.ID] != slices.Contains(n.Classes, "doc") {
			t.Errorf("node %s: classes %v; hub %v, result %v", n.ID, n.Classes, hubs[n.ID], results[n.ID])
		}
	}
	for _, e := range g.Edges {
		if pathEdges[e.ID] != slices.Contains(e.Classes, "path") {
			t.Errorf("edge %s: classes %v; on a path: %v", e.ID, e.Classes, pathEdges[e.ID])
		}
		if strings.HasSuffix(e.ID, "|P57|Q25191") && e.Label != "director" {
			t.Errorf("edge %s is labelled %q, want director", e.ID, e.Label)
		}
	}
	// Drawn, not only held: the canvas layers have painted pixels.
	painted := run(p, chromedp.Evaluate[int](`(() => { let n = 0;
		for (const c of document.querySelectorAll('#graph canvas')) {
			if (!c.width || !c.height) continue;
			const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
		}
		return n; })()`))
	if painted < 2000 {
		t.Errorf("the graph canvas has %d painted pixels", painted)
	}
}

// expandNode clicks, with the mouse, a node whose neighbourhood is not all
// drawn, and checks that the page fetched it through the subgraph route and
// drew it.
func expandNode(t *testing.T, p *page, s *server) {
	t.Helper()
	g := readGraph(t, p)
	on := map[string]bool{}
	for _, n := range g.Nodes {
		on[n.ID] = true
	}
	box := run(p, chromedp.Evaluate[[]float64](`(r => [r.left, r.top, r.right, r.bottom])(document.getElementById('graph').getBoundingClientRect())`))
	var pick string
	var sub api.Subgraph
	var x, y float64
	for _, n := range g.Nodes {
		if slices.Contains(n.Classes, "hub") || slices.Contains(n.Classes, "query") ||
			n.X < box[0]+20 || n.X > box[2]-20 || n.Y < box[1]+20 || n.Y > box[3]-20 {
			continue
		}
		// A node clear of the others, so that the click lands on it.
		isolated := true
		for _, o := range g.Nodes {
			if o.ID != n.ID && math.Hypot(o.X-n.X, o.Y-n.Y) < 22 {
				isolated = false
				break
			}
		}
		if !isolated {
			continue
		}
		var sg api.Subgraph
		s.ok(t, "GET", "/v1/entities/"+n.ID+"/subgraph", "", &sg)
		if slices.ContainsFunc(sg.Nodes, func(m api.Node) bool { return !on[m.QID] }) {
			pick, sub, x, y = n.ID, sg, n.X, n.Y
			break
		}
	}
	if pick == "" {
		t.Fatal("no node on the canvas is clear of the others and has undrawn neighbours")
	}
	p.do(chromedp.MouseClickXY(x, y))
	p.wait(`dmarExplorer.graph().expanded.includes('` + pick + `')`)
	if !p.requested("/v1/entities/" + pick + "/subgraph") {
		t.Errorf("expanding %s sent no GET /v1/entities/%s/subgraph", pick, pick)
	}
	g = readGraph(t, p)
	nodes, edges := g.nodeIDs(), g.edgeIDs()
	for _, n := range sub.Nodes {
		if !slices.Contains(nodes, n.QID) {
			t.Errorf("expanded %s, but its neighbour %s is not drawn", pick, n.QID)
		}
	}
	for _, e := range sub.Edges {
		if id := e.From + "|" + e.PID + "|" + e.To; !slices.Contains(edges, id) {
			t.Errorf("expanded %s, but its edge %s is not drawn", pick, id)
		}
	}
	if st := run(p, chromedp.Text(chromedp.ID("graph-status"))); !strings.Contains(st, "Expanded") || !strings.Contains(st, pick) {
		t.Errorf("status after expanding %s: %q", pick, st)
	}
}

// compare: two option sets side by side, each ranking the server's.
func compare(t *testing.T, p *page, s *server) {
	t.Helper()
	p.do(chromedp.Click(chromedp.ID("compare-on")), chromedp.SendKeys(chromedp.ID("k-b"), "5"), chromedp.Click(chromedp.ID("ask")))
	p.wait(`!document.getElementById('compare').hidden && document.querySelectorAll('.ranking-b li').length > 0`)
	for side, method := range map[string]string{"a": "", "b": "paper"} {
		body := `{"query": "Which films did Christopher Nolan direct?", "k": 5`
		if method != "" {
			body += `, "method": "` + method + `"`
		}
		var want api.RetrieveResponse
		s.ok(t, "POST", "/v1/retrieve", body+"}", &want)
		var ids []string
		for _, d := range want.Results {
			ids = append(ids, d.ID)
		}
		got := run(p, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.ranking-`+side+` li')].map(li => li.dataset.id)`))
		if !slices.Equal(got, ids) {
			t.Errorf("ranking %s: the page shows %v, the server returns %v", side, got, ids)
		}
	}
	if m := run(p, chromedp.Text(chromedp.CSS(".options-diff"))); !strings.Contains(m, "method") || !strings.Contains(m, "paper") {
		t.Errorf("the options that differ: %q", m)
	}
	p.do(chromedp.Click(chromedp.ID("compare-on")))
}

// liveDocument adds a document from the page, shows its links, finds it.
func liveDocument(t *testing.T, p *page, s *server) {
	t.Helper()
	const id = "explorer-note-1"
	const title = "The Zebulon memo"
	p.do(chromedp.SendKeys(chromedp.ID("doc-id"), id), chromedp.SendKeys(chromedp.ID("doc-title"), title),
		chromedp.SendKeys(chromedp.ID("doc-text"), "The Zebulon memo, an analyst's note: Christopher Nolan directed Inception, with Cillian Murphy in its cast."),
		chromedp.Click(chromedp.ID("doc-put")))
	p.wait(`document.querySelector('.stored[data-id="` + id + `"]')`)
	var want api.StoredDocument
	s.ok(t, "GET", "/v1/documents/"+id, "", &want)
	var wantQ []string
	for _, e := range want.Entities {
		wantQ = append(wantQ, e.QID)
	}
	got := run(p, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.stored .doc-entities button')].map(b => b.dataset.qid)`))
	if !slices.Equal(got, wantQ) || !slices.Contains(got, "Q25191") {
		t.Errorf("the new document's entities: the page shows %v, the server %v (want Q25191 among them)", got, wantQ)
	}
	p.do(chromedp.Click(chromedp.CSS(".stored .find")))
	p.wait(`document.querySelector('#doc-result .found')`)
	if f := run(p, chromedp.Text(chromedp.CSS("#doc-result .found"))); !strings.HasPrefix(f, "Found at rank") {
		t.Errorf("finding the new document by its title: %q", f)
	}
}

// badQuestion: the server's error message, not a blank page.
func badQuestion(t *testing.T, p *page, s *server) {
	t.Helper()
	var e api.ErrorBody
	if code := s.send(t, "POST", "/v1/retrieve", `{"query": "   "}`, true, &e); code != 400 {
		t.Fatalf("a blank question: %d", code)
	}
	p.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('question').value = ''`), chromedp.SendKeys(chromedp.ID("question"), "   "), chromedp.Click(chromedp.ID("ask")))
	p.wait(`!document.getElementById('error').hidden`)
	msg := run(p, chromedp.Text(chromedp.ID("error")))
	if !strings.Contains(msg, e.Error.Message) || !strings.Contains(msg, "400") {
		t.Errorf("the page says %q; the server said 400 %q", msg, e.Error.Message)
	}
	if !run(p, chromedp.Evaluate[bool](`document.getElementById('answer').hidden`)) {
		t.Error("the previous answer is still shown under the error")
	}
}

// ---- the browser ------------------------------------------------------------

type page struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	urls     map[network.RequestID]string
	failures []string
	problems []string
}

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%v\n%s", err, p.report())
	}
}

func run[T any](p *page, a chromedp.Action[T]) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, a)
	if err != nil {
		p.t.Fatalf("%v\n%s", err, p.report())
	}
	return v
}

// evalInto evaluates expr and decodes its JSON into out.
func evalInto(expr string, out any) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		b, err := chromedp.Evaluate[[]byte](expr)(ctx, tg)
		if err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, json.Unmarshal(b, out)
	}
}

func (p *page) wait(cond string) {
	p.t.Helper()
	p.do(chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(60*time.Second)))
}

func (p *page) requested(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.requests, func(u string) bool { return strings.HasSuffix(u, path) })
}

func (p *page) report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "requests: " + strings.Join(p.requests, " ") + "\nconsole: " + strings.Join(p.problems, "\n")
}

// checkTraffic: every request went to the server that served the page, none
// failed to load, and the console has no exception or policy violation.
func (p *page) checkTraffic(t *testing.T, s *server) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	host := strings.TrimPrefix(s.url, "http://")
	for _, r := range p.requests {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || u.Host != host {
			t.Errorf("the page requested %s, not on %s", r, host)
		}
	}
	if !slices.Contains(p.requests, s.url+"/ui/"+ui.GraphLibrary) {
		t.Errorf("the page did not load its graph library from %s/ui/%s", s.url, ui.GraphLibrary)
	}
	for _, f := range p.failures {
		t.Errorf("a request failed: %s", f)
	}
	for _, m := range p.problems {
		if strings.HasPrefix(m, "exception") || strings.Contains(m, "Content Security Policy") || strings.Contains(m, "Refused to") {
			t.Errorf("console: %s", m)
		}
	}
}

// openPage starts headless Chromium (the flags the machine needs as root)
// with a fresh profile, and records every request and console message.
func openPage(t *testing.T, chrome string) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	p := &page{t: t, ctx: ctx, urls: map[network.RequestID]string{}}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", chrome, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, e.Request.URL)
			p.urls[e.RequestID] = e.Request.URL
		case *network.EventLoadingFailed:
			if !e.Canceled {
				p.failures = append(p.failures, fmt.Sprintf("%s: %s %s", p.urls[e.RequestID], e.ErrorText, e.BlockedReason))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			p.mu.Lock()
			if m.IsException() {
				p.problems = append(p.problems, "exception: "+m.Text)
			} else {
				p.problems = append(p.problems, string(m.Type)+": "+m.Text)
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// chromium finds the browser; without one the test is skipped, in CI it fails.
func chromium(t *testing.T) string {
	t.Helper()
	if c := os.Getenv("DMAR_CHROMIUM"); c != "" {
		return c
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	need(t, "headless Chromium is not installed (Debian package chromium: CI=true scripts/setup/40-ui.sh, or DMAR_INSTALL_CHROMIUM=1; or set DMAR_CHROMIUM)")
	return ""
}

func need(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// ---- the server ---------------------------------------------------------------

type server struct {
	url, key string
}

// send sends a request to the server (with its key when withKey is true) and
// decodes the JSON answer into out; it returns the status.
func (s *server) send(t *testing.T, method, path, body string, withKey bool, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if withKey && s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: %d %v: %.200s", method, path, resp.StatusCode, err, b)
	}
	return resp.StatusCode
}

// ok sends a request with the key and wants 200.
func (s *server) ok(t *testing.T, method, path, body string, out any) {
	t.Helper()
	if code := s.send(t, method, path, body, true, out); code != 200 {
		t.Fatalf("%s %s: %d", method, path, code)
	}
}

// chromiumPath is the browser that chromium found at the start of the test.
var chromiumPath string

// buildDmar builds cmd/dmar, which embeds the page of this source tree.
func buildDmar(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dmar")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dmar-kg/dmar/cmd/dmar").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serve runs dmar serve on a free loopback port over data, with a fresh
// state folder (codexm-film loads in seconds), args, and, when key is set,
// that one API key (with write permission).
func serve(t *testing.T, bin, data, key string, args ...string) *server {
	t.Helper()
	dir := t.TempDir()
	env := append(os.Environ(), "DMAR_STATE="+filepath.Join(dir, "state"))
	if key != "" {
		sum := sha256.Sum256([]byte(key))
		cfg := filepath.Join(dir, "dmar.yaml")
		yaml := "server:\n  auth:\n    keys:\n      - name: explorer\n        sha256: " + hex.EncodeToString(sum[:]) + "\n        write: true\n"
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "DMAR_CONFIG="+cfg)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, args...)...)
	cmd.Env = env
	var logs bytes.Buffer
	var mu sync.Mutex
	cmd.Stderr = writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(b) })
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "dmar: serving on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return &server{url: u, key: key}
	case <-done:
	case <-time.After(3 * time.Minute):
	}
	mu.Lock()
	defer mu.Unlock()
	t.Fatalf("dmar serve did not start\n%s", logs.String())
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// directedBy reads the films whose director (P57) is qid from triples.tsv.
func directedBy(t *testing.T, triples, qid string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(triples)
	if err != nil {
		t.Fatal(err)
	}
	films := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 3 && f[1] == "P57" && f[2] == qid {
			films[f[0]] = true
		}
	}
	if len(films) < 5 {
		t.Fatalf("%s names %d films directed by %s, want at least 5", triples, len(films), qid)
	}
	return films
}

func keys(m map[string]bool) []string { return slices.Collect(maps.Keys(m)) }

// diff says which of want are missing from got and which of got are extra.
func diff(want, got []string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	for _, x := range got {
		g[x] = true
	}
	var missing, extra []string
	for x := range w {
		if !g[x] {
			missing = append(missing, x)
		}
	}
	for x := range g {
		if !w[x] {
			extra = append(extra, x)
		}
	}
	if len(missing)+len(extra) == 0 && len(got) == len(g) {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("missing %v, extra %v (%d drawn, %d distinct)", missing, extra, len(got), len(g))
}
