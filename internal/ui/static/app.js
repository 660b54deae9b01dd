// dmar explorer: one question at a time against the server that served this
// page (relative URLs only; the server's Content-Security-Policy forbids any
// other host). Everything from the server is written with textContent,
// never as HTML: documents are user text.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const KEY = 'dmar.apiKey';
  const BROWSER = 'dmar.neo4jBrowser';
  const QID = /^Q[1-9][0-9]*$/;

  // h builds an element: attrs maps to properties (on* to listeners),
  // children are nodes or strings (text), null and false are skipped.
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'data') Object.assign(el.dataset, v);
      else if (k in el) el[k] = v;
      else el.setAttribute(k, v);
    }
    for (const c of kids.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }
  const fmt = (x, d = 3) => (typeof x === 'number' && isFinite(x) ? x.toFixed(d) : '–');
  const clear = (el) => { el.replaceChildren(); return el; };

  // ---- the API, with the key asked for once per session ----------------

  class ApiError extends Error {
    constructor(status, code, message, field) {
      super(message);
      this.status = status; this.code = code; this.field = field;
    }
  }

  let keyWaiters = null; // resolvers of the requests waiting for a key

  function askKey(why) {
    if (!keyWaiters) {
      keyWaiters = [];
      $('key-why').textContent = why || 'This server needs an API key.';
      $('key-form').hidden = false;
      $('key-input').value = '';
      $('key-input').focus();
    }
    return new Promise((resolve, reject) => keyWaiters.push({ resolve, reject }));
  }

  function settleKey(key) {
    const ws = keyWaiters || [];
    keyWaiters = null;
    $('key-form').hidden = true;
    if (key) sessionStorage.setItem(KEY, key);
    showKey();
    for (const w of ws) {
      if (key) w.resolve();
      else w.reject(new ApiError(401, 'unauthorized', 'an API key is needed and none was given'));
    }
  }

  function showKey() {
    const has = !!sessionStorage.getItem(KEY);
    $('key-status').textContent = has ? 'API key set for this session' : '';
    $('key-forget').hidden = !has;
  }

  async function api(method, path, body) {
    for (;;) {
      const headers = {};
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const key = sessionStorage.getItem(KEY);
      if (key) headers.Authorization = 'Bearer ' + key;
      let resp;
      try {
        resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (e) {
        throw new ApiError(0, 'network', 'the server did not answer (' + e.message + ')');
      }
      const text = await resp.text();
      let data = null;
      try { data = text ? JSON.parse(text) : null; } catch (_) { /* not JSON: reported below */ }
      if (resp.ok) return data;
      const e = (data && data.error) || {};
      if (resp.status === 401) {
        if (key) sessionStorage.removeItem(KEY);
        await askKey((key ? 'The API key was refused: ' : '') + (e.message || 'an API key is required'));
        continue;
      }
      throw new ApiError(resp.status, e.code || 'http_' + resp.status, e.message || text.slice(0, 300) || resp.statusText, e.field);
    }
  }

  function showError(err, what) {
    const el = $('error');
    if (!err) { el.hidden = true; el.textContent = ''; return; }
    const status = err.status ? err.status + ' ' : '';
    const code = err.code ? err.code + ': ' : '';
    el.textContent = (what ? what + ' failed: ' : '') + status + code + err.message + (err.field ? ' (field: ' + err.field + ')' : '');
    el.hidden = false;
  }

  // ---- asking --------------------------------------------------------------

  const state = { a: null, b: null, link: null, labels: new Map() };

  const list = (s) => s.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);

  // request reads one side's options; a malformed JSON box is the page's
  // error, named as such, and nothing is sent.
  function request(q, side) {
    const r = { query: q };
    const method = $('method-' + side).value;
    if (method) r.method = method;
    const k = $('k-' + side).value.trim();
    if (k !== '') r.k = Number(k);
    const ids = list($('ids-' + side).value);
    const ents = list($('ents-' + side).value);
    if (ids.length || ents.length) {
      r.filter = {};
      if (ids.length) r.filter.ids = ids;
      if (ents.length) r.filter.any_entities = ents;
    }
    const extra = $('extra-' + side).value.trim();
    if (extra) {
      let o;
      try { o = JSON.parse(extra); } catch (e) {
        throw new ApiError(0, 'page', 'options ' + side.toUpperCase() + ': "more options" is not JSON: ' + e.message);
      }
      if (!o || typeof o !== 'object' || Array.isArray(o)) {
        throw new ApiError(0, 'page', 'options ' + side.toUpperCase() + ': "more options" must be a JSON object');
      }
      Object.assign(r, o);
    }
    return r;
  }

  async function ask(ev) {
    if (ev) ev.preventDefault();
    showError(null);
    const q = $('question').value;
    const compare = $('compare-on').checked;
    let ra, rb;
    try {
      ra = request(q, 'a');
      if (compare) rb = request(q, 'b');
    } catch (e) { showError(e, 'the request'); return; }
    $('ask').disabled = true;
    $('ask').textContent = 'Asking…';
    try {
      const link = api('POST', '/v1/link', { text: q }).catch(() => null);
      const [a, b] = await Promise.all([api('POST', '/v1/retrieve', ra), rb ? api('POST', '/v1/retrieve', rb) : null]);
      state.a = a; state.b = b; state.link = await link;
      remember(ra);
      render();
    } catch (e) {
      state.a = state.b = null;
      $('answer').hidden = true;
      showError(e, 'retrieve');
    } finally {
      $('ask').disabled = false;
      $('ask').textContent = 'Ask';
    }
  }

  // remember puts the question and side A's main options in the address,
  // so that a link or a bookmark asks it again (read back by start).
  function remember(r) {
    const u = new URL(location.href);
    u.search = '';
    u.searchParams.set('q', r.query);
    if (r.method) u.searchParams.set('method', r.method);
    if (r.k !== undefined) u.searchParams.set('k', String(r.k));
    history.replaceState(null, '', u);
  }

  function recall() {
    const q = new URLSearchParams(location.search);
    if (!q.has('q')) return false;
    $('question').value = q.get('q');
    if (q.has('method')) $('method-a').value = q.get('method');
    if (q.has('k')) $('k-a').value = q.get('k');
    return true;
  }

  // ---- rendering an answer ---------------------------------------------

  const KNOWN_TOP = new Set(['query', 'results', 'anchors', 'query_entities', 'query_subgraphs', 'reformulated_query',
    'reformulator', 'fallbacks', 'timings_ms', 'options', 'neo4j', 'neo4j_paths', 'retrieval_id']);
  const KNOWN_BREAKDOWN = new Set(['semantic', 'structural', 'z_semantic', 'z_structural', 'gate', 'stage', 'search_score',
    'explain', 'in_first_stage', 'anchor', 'source', 'graph', 'paths']);

  function learnLabels(res) {
    const L = state.labels;
    const put = (q, l) => { if (q && l && l !== q && !L.has(q)) L.set(q, l); };
    for (const e of res.query_entities || []) put(e.qid, e.label);
    const sgs = [...(res.query_subgraphs || [])];
    for (const a of res.anchors || []) sgs.push(...(a.subgraphs || []));
    for (const sg of sgs) for (const n of sg.nodes || []) put(n.qid, n.label);
    for (const d of [...(res.results || []), ...(res.anchors || [])]) {
      if (QID.test(d.id)) put(d.id, d.title);
      for (const p of (d.breakdown && d.breakdown.paths) || []) { put(p.from, p.from_label); put(p.to, p.to_label); }
    }
  }
  const label = (q) => state.labels.get(q) || q;

  function render() {
    const a = state.a;
    learnLabels(a);
    if (state.b) learnLabels(state.b);
    $('answer').hidden = false;
    renderSummary(a);
    renderEntities(a);
    renderResults(a);
    renderCompare();
    renderOther(a);
    graph.showQuery();
  }

  function renderSummary(a) {
    const el = clear($('summary'));
    const o = a.options || {};
    if (a.reformulated_query && a.reformulated_query !== a.query) {
      el.append(h('div', {}, h('strong', {}, 'Reformulated'), ' (', a.reformulator || '?', '): ', h('span', { class: 'muted' }, a.reformulated_query)));
    }
    const t = a.timings_ms || {};
    el.append(h('div', {}, h('strong', {}, 'Ran with'), ' method ', o.method || '?', ', k ', o.k, ', linking ', o.linking || 'exact',
      ', gate ', o.gate, ', structure ', o.structure, typeof t.total === 'number' ? ', in ' + fmt(t.total, 1) + ' ms' : ''));
    for (const f of a.fallbacks || []) el.append(h('div', { class: 'down' }, 'Fallback ', h('strong', {}, f.name), ': ', f.reason));
    if (a.retrieval_id) el.append(h('div', {}, 'Recorded as retrieval ', h('code', {}, a.retrieval_id)));
  }

  function renderEntities(a) {
    const t = clear($('entities'));
    const es = a.query_entities || [];
    t.append(h('tr', {}, h('th', {}, 'entity'), h('th', {}, 'QID'), h('th', {}, 'mention'), h('th', {}, 'confidence')));
    if (!es.length) t.append(h('tr', {}, h('td', { colSpan: 4, class: 'muted' }, 'No entity was linked in the question.')));
    for (const e of es) {
      t.append(h('tr', { class: 'entity', data: { qid: e.qid } },
        h('td', {}, e.label || e.qid),
        h('td', {}, h('button', { class: 'link', type: 'button', onclick: () => graph.showEntity(e.qid) }, e.qid)),
        h('td', {}, '“', e.surface, '” ', h('span', { class: 'muted' }, '[' + e.start + ', ' + e.end + ')')),
        h('td', { class: 'num' }, typeof e.confidence === 'number' ? fmt(e.confidence) : h('span', { class: 'muted', title: 'exact linking gives no confidence' }, '–'))));
    }
    const d = clear($('dropped'));
    // What the exact dictionary links but the retrieval did not keep: with
    // linking=context, mentions dropped as unsure (or covered by a longer one).
    const kept = new Set(es.map((e) => e.qid + '@' + e.start));
    const keptQ = new Set(es.map((e) => e.qid));
    const dropped = ((state.link && state.link.mentions) || []).filter((m) => !kept.has(m.qid + '@' + m.start) && !keptQ.has(m.qid));
    if (dropped.length) {
      d.append(h('p', {}, h('strong', {}, 'Dropped as unsure'), h('span', { class: 'muted' },
        ' (the dictionary links these mentions; the ' + ((a.options || {}).linking || 'exact') + ' linker did not keep them):')),
      h('ul', { class: 'dropped' }, dropped.map((m) => h('li', {}, '“', m.surface, '” → ', m.label || m.qid, ' ', h('code', {}, m.qid)))));
    } else if (state.link) {
      d.append(h('p', { class: 'muted' }, 'Nothing dropped: every mention the dictionary links was kept.'));
    }
  }

  // pathEdges: the stored edges (from|pid|to) and nodes of every path that
  // carried a result: the graph channel's path and the named paths.
  function pathEdges(res) {
    const edges = new Map();
    const nodes = new Set();
    for (const d of res.results || []) {
      const b = d.breakdown || {};
      const ps = [...(b.paths || [])];
      if (b.graph) ps.push(b.graph);
      for (const p of ps) {
        for (const s of p.steps || []) {
          const [f, t] = s.backward ? [s.to, s.from] : [s.from, s.to];
          edges.set(f + '|' + s.pid + '|' + t, { from: f, to: t, pid: s.pid, label: s.label });
          nodes.add(s.from); nodes.add(s.to);
        }
      }
    }
    return { edges, nodes };
  }

  function scoreTable(b) {
    const g = b.gate || {};
    const cols = [['semantic', b.semantic], ['structural', b.structural], ['z sem.', b.z_semantic], ['z struct.', b.z_structural],
      ['gate sem.', g.semantic], ['gate struct.', g.structural], ['search', b.search_score]];
    if (b.graph) cols.push(['graph', b.graph.score], ['path rel.', b.graph.relevance]);
    for (const [k, v] of Object.entries(b)) if (!KNOWN_BREAKDOWN.has(k) && typeof v === 'number') cols.push([k.replace(/_/g, ' '), v]);
    return h('table', { class: 'grid scores' }, h('tr', {}, cols.map(([k]) => h('th', {}, k))),
      h('tr', {}, cols.map(([, v]) => h('td', { class: 'num' }, fmt(v)))));
  }

  // carried says what brought a document: the graph channel's path, the
  // named paths from the question's entities, a direct mention, or text.
  function carried(d, res) {
    const b = d.breakdown || {};
    const items = [];
    if (b.graph) {
      items.push(h('li', { class: 'via-graph' }, h('strong', {}, 'graph channel: '), h('span', { class: 'path' }, stepText(b.graph.steps, b.graph.path)),
        h('span', { class: 'muted' }, ' relevance ' + fmt(b.graph.relevance))));
    }
    for (const p of b.paths || []) {
      items.push(h('li', { class: 'via-path' }, h('strong', {}, p.from_kind === 'top_document' ? 'path from the top document: ' : 'path: '),
        h('span', { class: 'path' }, p.text || p.path), h('span', { class: 'muted' }, ' relevance ' + fmt(p.relevance))));
    }
    const qe = new Set((res.query_entities || []).map((e) => e.qid));
    const bridge = (d.entities || []).filter((q) => qe.has(q));
    if (bridge.length) items.push(h('li', { class: 'via-mention' }, h('strong', {}, 'mention bridge: '), 'the document mentions ', bridge.map(label).join(', ')));
    if (!items.length) items.push(h('li', { class: 'muted' }, 'text search only: ', b.explain || 'no path from the question’s entities'));
    else if (b.explain) items.push(h('li', { class: 'muted' }, 'search: ', b.explain));
    return h('ul', { class: 'carried' }, items);
  }

  function stepText(steps, fallback) {
    if (!steps || !steps.length) return fallback || '';
    let s = label(steps[0].from);
    for (const st of steps) s += ' -[' + (st.label || st.pid) + (st.backward ? ' of' : '') + ']-> ' + label(st.to);
    return s;
  }

  function renderResults(a) {
    const ol = clear($('results'));
    for (const d of a.results || []) ol.append(resultItem(d, a));
    if (!(a.results || []).length) ol.append(h('li', { class: 'muted' }, 'No document was returned.'));
  }

  function resultItem(d, res) {
    const b = d.breakdown || {};
    const text = h('div', { class: 'doctext', hidden: true });
    const li = h('li', { class: 'result', data: { id: d.id } },
      h('div', { class: 'head' }, h('span', { class: 'rank' }, '#' + d.rank), h('span', { class: 'title' }, d.title || d.id),
        h('code', { class: 'muted' }, d.id),
        b.anchor ? h('span', { class: 'badge anchor' }, 'anchor') : null,
        b.source ? h('span', { class: 'badge ' + b.source }, 'via ' + b.source) : null,
        b.stage ? h('span', { class: 'badge' }, b.stage + ' stage') : null,
        h('span', { class: 'score' }, 'final ', h('strong', {}, fmt(d.score)))),
      scoreTable(b), carried(d, res),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'show-text', onclick: () => toggleText(d, text) }, 'Text'),
        h('button', { type: 'button', class: 'show-subgraph', onclick: () => graph.showDocument(d) }, 'Its subgraph')),
      text);
    return li;
  }

  async function toggleText(d, el) {
    if (!el.hidden) { el.hidden = true; return; }
    el.hidden = false;
    clear(el).append(h('span', { class: 'muted' }, 'loading…'));
    try {
      const doc = await api('GET', '/v1/documents/' + encodeURIComponent(d.id));
      clear(el).append(storedDoc(doc));
    } catch (e) {
      // No document store (503): the response's own text.
      clear(el).append(h('pre', {}, d.text || ''), h('p', { class: 'muted' }, 'GET /v1/documents: ' + e.message));
    }
  }

  function storedDoc(doc) {
    const ents = doc.entities || [];
    return h('div', {}, h('pre', {}, doc.text || ''),
      h('div', { class: 'doc-entities' }, h('strong', {}, 'Linked entities: '), ents.length ? '' : h('span', { class: 'muted' }, 'none'),
        ents.map((e) => h('button', { type: 'button', class: 'link', data: { qid: e.qid }, onclick: () => graph.showEntity(e.qid) }, (e.label || e.qid) + ' ' + e.qid))));
  }

  function renderOther(a) {
    const el = clear($('other-fields'));
    const other = Object.entries(a).filter(([k]) => !KNOWN_TOP.has(k));
    if (other.length) {
      el.append(h('details', {}, h('summary', {}, 'Other fields of the response'), h('pre', {}, JSON.stringify(Object.fromEntries(other), null, 2))));
    }
  }

  // ---- side by side -------------------------------------------------------

  function carriedShort(d) {
    if (!d) return '';
    const b = d.breakdown || {};
    if (b.graph) return 'graph: ' + stepText(b.graph.steps, b.graph.path);
    if ((b.paths || []).length) return 'path: ' + (b.paths[0].text || b.paths[0].path);
    return 'text search';
  }

  function renderCompare() {
    const sec = $('compare');
    const { a, b } = state;
    if (!b) { sec.hidden = true; return; }
    sec.hidden = false;
    const body = clear($('compare-body'));
    const oa = a.options || {}, ob = b.options || {};
    const keys = [...new Set([...Object.keys(oa), ...Object.keys(ob)])].filter((k) => JSON.stringify(oa[k]) !== JSON.stringify(ob[k]));
    body.append(h('p', {}, h('strong', {}, 'Options that differ: '), keys.length ? '' : 'none'),
      keys.length ? h('table', { class: 'grid options-diff' }, h('tr', {}, h('th', {}, 'option'), h('th', {}, 'A'), h('th', {}, 'B')),
        keys.map((k) => h('tr', {}, h('td', {}, k), h('td', {}, JSON.stringify(oa[k]) ?? '–'), h('td', {}, JSON.stringify(ob[k]) ?? '–')))) : null);
    const col = (res, side) => h('div', {}, h('strong', {}, 'Ranking ', h('span', { class: 'side' }, side)),
      h('ol', { class: 'ranking-' + side.toLowerCase() }, (res.results || []).map((d) => h('li', { data: { id: d.id } }, d.title || d.id, ' ', h('span', { class: 'muted' }, fmt(d.score))))));
    body.append(h('div', { class: 'compare-cols' }, col(a, 'A'), col(b, 'B')));
    const ia = new Map((a.results || []).map((d) => [d.id, d]));
    const ib = new Map((b.results || []).map((d) => [d.id, d]));
    const ids = [...new Set([...ia.keys(), ...ib.keys()])];
    const rows = ids.map((id) => {
      const x = ia.get(id), y = ib.get(id);
      let move = '', cls = '';
      if (x && y) {
        const dr = x.rank - y.rank;
        move = dr === 0 ? 'same rank' : (dr > 0 ? '↑ ' + dr : '↓ ' + -dr);
        cls = dr > 0 ? 'up' : dr < 0 ? 'down' : '';
      } else if (y) { move = 'only in B'; cls = 'up'; } else { move = 'only in A'; cls = 'down'; }
      const why = [];
      const sa = carriedShort(x), sb = carriedShort(y);
      if (x && y && sa !== sb) why.push('A ' + sa + '; B ' + sb);
      else if (sa || sb) why.push(sa || sb);
      const ga = x && x.breakdown && x.breakdown.gate, gb = y && y.breakdown && y.breakdown.gate;
      if (ga && gb && (Math.abs(ga.semantic - gb.semantic) > 1e-6)) why.push('gate semantic ' + fmt(ga.semantic, 2) + ' → ' + fmt(gb.semantic, 2));
      return h('tr', { data: { id } }, h('td', {}, (x || y).title || id), h('td', { class: 'num' }, x ? x.rank : '–'), h('td', { class: 'num' }, y ? y.rank : '–'),
        h('td', { class: cls }, move), h('td', { class: 'num' }, x ? fmt(x.score) : '–'), h('td', { class: 'num' }, y ? fmt(y.score) : '–'), h('td', {}, why.join('; ')));
    });
    body.append(h('h3', {}, 'What changed, and why'), h('table', { class: 'grid changes' },
      h('tr', {}, ['document', 'rank A', 'rank B', 'move', 'score A', 'score B', 'carried by'].map((t) => h('th', {}, t))), rows));
  }

  // ---- the graph ------------------------------------------------------------

  const graph = {
    cy: null,
    view: null,     // {title, statementRoots}
    expanded: new Set(),

    available() { return typeof window.cytoscape === 'function'; },

    // elements turns subgraphs into cytoscape nodes and edges, marking
    // the question's entities, hubs, result documents and path edges.
    elements(subgraphs, res) {
      const qe = new Set(((res && res.query_entities) || []).map((e) => e.qid));
      const docs = new Set(((res && res.results) || []).map((d) => d.id));
      const pe = res ? pathEdges(res) : { edges: new Map(), nodes: new Set() };
      const nodes = new Map(), edges = new Map();
      const addNode = (q, lbl, hub) => {
        const n = nodes.get(q);
        if (n) { if (hub) n.hub = true; return; }
        nodes.set(q, { qid: q, label: lbl || label(q), hub: !!hub });
      };
      const addEdge = (e) => {
        const id = e.from + '|' + e.pid + '|' + e.to;
        if (!edges.has(id)) edges.set(id, { id, from: e.from, to: e.to, pid: e.pid, label: e.label || e.pid });
      };
      for (const sg of subgraphs) {
        for (const n of sg.nodes || []) addNode(n.qid, n.label, n.hub);
        for (const e of sg.edges || []) addEdge(e);
      }
      for (const e of pe.edges.values()) { addNode(e.from); addNode(e.to); addEdge(e); }
      const els = [];
      for (const n of nodes.values()) {
        const cls = [qe.has(n.qid) && 'query', docs.has(n.qid) && 'doc', n.hub && 'hub', pe.nodes.has(n.qid) && 'onpath', this.expanded.has(n.qid) && 'expanded'];
        els.push({ group: 'nodes', data: { id: n.qid, label: n.label }, classes: cls.filter(Boolean).join(' ') });
      }
      for (const e of edges.values()) {
        els.push({ group: 'edges', data: { id: e.id, source: e.from, target: e.to, pid: e.pid, label: e.label }, classes: pe.edges.has(e.id) ? 'path' : '' });
      }
      return els;
    },

    draw(title, subgraphs, res, roots) {
      $('graph-title').textContent = title;
      $('graph-query').disabled = !state.a;
      this.expanded = new Set();
      this.view = { roots };
      this.neo4j();
      const els = this.elements(subgraphs, res);
      if (!this.available()) { this.list(els); return; }
      if (!this.cy) this.init();
      this.cy.elements().remove();
      this.cy.add(els);
      this.layout();
      this.status(this.cy.nodes().length + ' nodes, ' + this.cy.edges().length + ' edges. Click a node to expand its neighbourhood.');
    },

    init() {
      clear($('graph'));
      this.cy = cytoscape({
        container: $('graph'),
        minZoom: 0.1, maxZoom: 4,
        style: [
          // Only the question's entities, the documents and the path nodes
          // keep their labels when zoomed out; the others show on zooming in.
          { selector: 'node', style: { 'background-color': '#98a2b3', label: 'data(label)', 'font-size': 9, 'min-zoomed-font-size': 8, color: '#344054', 'text-valign': 'bottom', 'text-margin-y': 2, width: 16, height: 16, 'text-wrap': 'ellipsis', 'text-max-width': 110 } },
          { selector: 'node.doc, node.onpath', style: { 'font-size': 11, 'min-zoomed-font-size': 0, color: '#1d2330', 'text-background-color': '#fff', 'text-background-opacity': 0.8, 'text-background-padding': 1, 'z-index': 5 } },
          { selector: 'node.doc', style: { 'background-color': '#12b76a', shape: 'round-rectangle', width: 20, height: 20 } },
          { selector: 'node.onpath', style: { 'border-width': 2, 'border-color': '#d92d20' } },
          { selector: 'node.query', style: { 'background-color': '#f79009', width: 30, height: 30, 'font-size': 13, 'text-max-width': 220, 'font-weight': 'bold', 'z-index': 9 } },
          { selector: 'node.hub', style: { shape: 'diamond', 'background-color': '#fff', 'border-width': 3, 'border-color': '#7a5af8' } },
          { selector: 'node.expanded', style: { 'border-width': 3, 'border-color': '#1d2330' } },
          { selector: 'node:selected', style: { 'overlay-opacity': 0.15, 'overlay-color': '#1849a9' } },
          { selector: 'edge', style: { width: 1, 'line-color': '#d0d5dd', 'target-arrow-color': '#d0d5dd', 'target-arrow-shape': 'triangle', 'arrow-scale': 0.7, 'curve-style': 'bezier', label: 'data(label)', 'font-size': 7, color: '#667085', 'text-rotation': 'autorotate', 'min-zoomed-font-size': 7 } },
          { selector: 'edge.path', style: { width: 3, 'line-color': '#d92d20', 'target-arrow-color': '#d92d20', color: '#b42318', 'font-size': 10, 'min-zoomed-font-size': 0, 'text-background-color': '#fff', 'text-background-opacity': 0.8, 'z-index': 10 } },
        ],
      });
      this.cy.on('tap', 'node', (ev) => this.expand(ev.target.id()));
    },

    layout() {
      if (!this.cy) return;
      this.cy.layout({ name: 'cose', animate: false, idealEdgeLength: () => 90, nodeRepulsion: () => 40000, nodeOverlap: 20, gravity: 0.5, padding: 20 }).run();
      this.cy.fit(undefined, 20);
    },

    list(els) {
      const el = clear($('graph-list'));
      el.hidden = false;
      $('graph').hidden = true;
      const nodes = els.filter((e) => e.group === 'nodes'), edges = els.filter((e) => e.group === 'edges');
      el.append(h('p', {}, nodes.length + ' nodes, ' + edges.length + ' edges (drawn when the library is embedded):'),
        h('ul', {}, edges.map((e) => h('li', { class: e.classes }, label(e.data.source) + ' -[' + e.data.label + ']-> ' + label(e.data.target)))));
    },

    status(s) { $('graph-status').textContent = s; },

    showQuery() {
      const a = state.a;
      if (!a) return;
      const sgs = [...(a.query_subgraphs || [])];
      for (const an of a.anchors || []) sgs.push(...(an.subgraphs || []));
      const roots = [...new Set(sgs.map((s) => s.root))];
      this.draw('The question’s entities and the anchors’ subgraphs', sgs, a, roots);
    },

    async fetchSubgraph(qid) {
      return api('GET', '/v1/entities/' + encodeURIComponent(qid) + '/subgraph');
    },

    async showEntity(qid) {
      try {
        const sg = await this.fetchSubgraph(qid);
        learnLabels({ query_subgraphs: [sg] });
        this.draw('Subgraph of ' + label(qid) + ' (' + qid + ')', [sg], state.a, [qid]);
      } catch (e) { showError(e, 'subgraph of ' + qid); }
    },

    // showDocument draws a document's own subgraph: an anchor's are in the
    // response; any other document's is its entity's, from the subgraph route.
    async showDocument(d) {
      showError(null);
      const an = ((state.a && state.a.anchors) || []).find((x) => x.id === d.id);
      if (an && (an.subgraphs || []).length) {
        this.draw('Subgraphs of anchor ' + (d.title || d.id), an.subgraphs, state.a, an.subgraphs.map((s) => s.root));
        return;
      }
      const ents = d.entities || [];
      const root = QID.test(d.id) && (ents.includes(d.id) || !ents.length) ? d.id : ents[0];
      if (!root) { this.status('Document ' + d.id + ' links no entity: it has no subgraph.'); return; }
      try {
        const sg = await this.fetchSubgraph(root);
        learnLabels({ query_subgraphs: [sg] });
        this.draw('Subgraph of document ' + (d.title || d.id) + ' (' + root + ')', [sg], state.a, [root]);
      } catch (e) { showError(e, 'subgraph of ' + root); }
    },

    // expand adds a node's neighbourhood (the subgraph route) around it.
    async expand(qid) {
      if (!this.cy) return;
      const node = this.cy.getElementById(qid);
      if (this.expanded.has(qid)) { this.status(label(qid) + ' (' + qid + ') is already expanded.'); return; }
      this.status('Expanding ' + label(qid) + ' (' + qid + ')…');
      let sg;
      try { sg = await this.fetchSubgraph(qid); } catch (e) { showError(e, 'expanding ' + qid); this.status(''); return; }
      learnLabels({ query_subgraphs: [sg] });
      this.expanded.add(qid);
      node.addClass('expanded');
      const before = this.cy.elements().length;
      const fresh = this.elements([sg], state.a).filter((e) => this.cy.getElementById(e.data.id).empty());
      const newNodes = fresh.filter((e) => e.group === 'nodes');
      const c = node.position(), r = 70 + 5 * newNodes.length;
      newNodes.forEach((e, i) => {
        const t = (2 * Math.PI * i) / Math.max(1, newNodes.length);
        e.position = { x: c.x + r * Math.cos(t), y: c.y + r * Math.sin(t) };
      });
      this.cy.add(fresh);
      const added = this.cy.elements().length - before;
      const hub = (sg.nodes || []).some((n) => n.qid === qid && n.hub);
      this.status('Expanded ' + label(qid) + ' (' + qid + '): ' + newNodes.length + ' new nodes, ' + (added - newNodes.length) + ' new edges' +
        (hub ? '; it is a hub, so the server does not expand it' : '') + (sg.truncated ? '; the node cap cut it' : '') + '.');
      this.view.roots = [...new Set([...this.view.roots, qid])];
      this.neo4j();
    },

    // neo4j links the drawn subgraph to Neo4j Browser with the statement
    // dmar returned (neo4j: the anchors' subgraphs), its roots set to what
    // is drawn; shown only when the server's graph is Neo4j.
    neo4j() {
      const a = state.a, box = $('neo4j');
      const st = a && a.neo4j;
      if (!st || !st.cypher) { box.hidden = true; return; }
      box.hidden = false;
      const url = $('neo4j-url');
      if (!url.value) url.value = sessionStorage.getItem(BROWSER) || location.protocol + '//' + location.hostname + ':7474/browser/';
      const params = Object.assign({}, st.params || {}, { roots: (this.view && this.view.roots) || (st.params || {}).roots });
      $('neo4j-open').href = browserLink(url.value, st.cypher, params);
      $('neo4j-stmt').textContent = ':params ' + JSON.stringify(params) + '\n\n' + st.cypher;
      const pp = a.neo4j_paths;
      $('neo4j-paths-open').hidden = !(pp && pp.cypher);
      if (pp && pp.cypher) $('neo4j-paths-open').href = browserLink(url.value, pp.cypher, pp.params || {});
    },
  };

  // browserLink opens Neo4j Browser with the statement in its editor, the
  // parameters written in as Cypher literals (Browser's URL takes one
  // command; :params and the statement would need two).
  function browserLink(base, cypher, params) {
    const body = cypher.split('\n').filter((l) => !l.trim().startsWith('//')).join('\n')
      .replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name) => (name in params ? cypherLiteral(params[name]) : m));
    const u = new URL(base, location.href);
    u.searchParams.set('cmd', 'edit');
    u.searchParams.set('arg', body);
    return u.toString();
  }

  function cypherLiteral(v) {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (typeof v === 'string') return "'" + v.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
    if (Array.isArray(v)) return '[' + v.map(cypherLiteral).join(', ') + ']';
    return '{' + Object.entries(v).map(([k, x]) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : '`' + k.replace(/`/g, '``') + '`') + ': ' + cypherLiteral(x)).join(', ') + '}';
  }

  // ---- live documents -----------------------------------------------------

  async function putDoc(ev) {
    ev.preventDefault();
    showError(null);
    const id = $('doc-id').value.trim(), title = $('doc-title').value, text = $('doc-text').value;
    const out = clear($('doc-result'));
    try {
      const r = await api('PUT', '/v1/documents', { documents: [{ id, title, text }] });
      for (const rj of r.rejected || []) out.append(h('p', { class: 'down' }, 'Rejected ', rj.field, ': ', rj.reason));
      if (!(r.rejected || []).length) {
        out.append(h('p', {}, r.created ? 'Added ' : r.updated ? 'Updated ' : 'Unchanged: ', h('code', {}, id)));
        await showDoc(id, true);
      }
    } catch (e) { showError(e, 'adding the document'); }
  }

  async function showDoc(id, keep) {
    const out = keep ? $('doc-result') : clear($('doc-result'));
    showError(null);
    try {
      const doc = await api('GET', '/v1/documents/' + encodeURIComponent(id));
      out.append(h('div', { class: 'stored', data: { id: doc.id } }, h('strong', {}, doc.title || doc.id), ' ', h('code', {}, doc.id), storedDoc(doc),
        h('div', { class: 'actions' }, h('button', { type: 'button', class: 'find', onclick: () => findDoc(doc) }, 'Find it'))));
    } catch (e) { showError(e, 'document ' + id); }
  }

  async function deleteDoc() {
    const id = $('doc-id').value.trim();
    showError(null);
    try {
      const r = await api('DELETE', '/v1/documents/' + encodeURIComponent(id));
      clear($('doc-result')).append(h('p', {}, 'Deleted ', String(r.deleted), ' document: ', h('code', {}, id)));
    } catch (e) { showError(e, 'deleting ' + id); }
  }

  // findDoc asks the document's title and marks the document in the answer.
  async function findDoc(doc) {
    $('question').value = doc.title || doc.text.slice(0, 200);
    await ask();
    const li = [...document.querySelectorAll('#results .result')].find((x) => x.dataset.id === doc.id);
    const out = $('doc-result');
    if (li) { li.classList.add('mine'); li.scrollIntoView({ block: 'center' }); out.append(h('p', { class: 'up found' }, 'Found at rank ', li.querySelector('.rank').textContent, '.')); }
    else if (state.a) out.append(h('p', { class: 'down found' }, 'Not in the top ' + (state.a.results || []).length + ' for its title.'));
  }

  // ---- start ------------------------------------------------------------------

  async function ready() {
    try {
      const r = await fetch('/readyz');
      const b = await r.json();
      $('server-status').textContent = 'server ' + b.status + Object.entries(b.checks || {}).map(([k, v]) => ' · ' + k + ' ' + v).join('');
    } catch (e) { $('server-status').textContent = 'server unreachable'; }
  }

  function start() {
    $('lib-missing').hidden = graph.available();
    $('graph-layout').hidden = $('graph-fit').hidden = !graph.available();
    $('ask-form').addEventListener('submit', ask);
    $('compare-on').addEventListener('change', () => { $('opts-b').hidden = !$('compare-on').checked; });
    $('key-form').addEventListener('submit', (ev) => { ev.preventDefault(); settleKey($('key-input').value.trim()); });
    $('key-cancel').addEventListener('click', () => settleKey(''));
    $('key-forget').addEventListener('click', () => { sessionStorage.removeItem(KEY); showKey(); });
    $('graph-query').addEventListener('click', () => graph.showQuery());
    $('graph-layout').addEventListener('click', () => graph.layout());
    $('graph-fit').addEventListener('click', () => graph.cy && graph.cy.fit(undefined, 20));
    $('neo4j-url').addEventListener('change', () => { sessionStorage.setItem(BROWSER, $('neo4j-url').value); graph.neo4j(); });
    $('doc-form').addEventListener('submit', putDoc);
    $('doc-show').addEventListener('click', () => showDoc($('doc-id').value.trim()));
    $('doc-delete').addEventListener('click', deleteDoc);
    showKey();
    ready();
    document.body.dataset.ready = 'true';
    if (recall()) ask();
  }

  // What tests and curious analysts can read off the page: the drawn graph.
  window.dmarExplorer = {
    graph() {
      const cy = graph.cy;
      if (!cy) return null;
      const rect = $('graph').getBoundingClientRect();
      return {
        nodes: cy.nodes().map((n) => ({ id: n.id(), label: n.data('label'), classes: n.classes(), x: rect.left + n.renderedPosition('x'), y: rect.top + n.renderedPosition('y') })),
        edges: cy.edges().map((e) => ({ id: e.id(), label: e.data('label'), classes: e.classes() })),
        expanded: [...graph.expanded],
      };
    },
  };

  start();
})();
