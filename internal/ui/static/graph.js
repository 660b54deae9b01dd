// The graph panel: the subgraphs drawn with cytoscape.js, expanded on click,
// linked to Neo4j Browser; and what it shares with the rest of the page:
// the answers, entity labels and the paths that carried the results.
import { $, h, clear } from './dom.js';
import { api, showError } from './api.js';

const BROWSER = 'dmar.neo4jBrowser';
export const QID = /^Q[1-9][0-9]*$/;

export const state = { a: null, b: null, link: null, labels: new Map() };

export function learnLabels(res) {
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
export const label = (q) => state.labels.get(q) || q;

// pathEdges: the stored edges (from|pid|to) and nodes of every path that
// carried a result: the graph channel's path and the named paths.
export function pathEdges(res) {
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

export function stepText(steps, fallback) {
  if (!steps || !steps.length) return fallback || '';
  let s = label(steps[0].from);
  for (const st of steps) s += ' -[' + (st.label || st.pid) + (st.backward ? ' of' : '') + ']-> ' + label(st.to);
  return s;
}

export const graph = {
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

  browserChanged() {
    sessionStorage.setItem(BROWSER, $('neo4j-url').value);
    this.neo4j();
  },

  // neo4j links the drawn subgraph to Neo4j Browser with the statement
  // dmar returned (neo4j: the question's and the anchors' subgraphs), its roots set to what
  // is drawn; shown only when the server's graph is Neo4j.
  neo4j() {
    const a = state.a, box = $('neo4j');
    const st = a && a.neo4j, pp = a && a.neo4j_paths;
    const hasSt = !!(st && st.cypher), hasPaths = !!(pp && pp.cypher);
    if (!hasSt && !hasPaths) { box.hidden = true; return; }
    box.hidden = false;
    const url = $('neo4j-url');
    if (!url.value) url.value = sessionStorage.getItem(BROWSER) || location.protocol + '//' + location.hostname + ':7474/browser/';
    // Without anchors or G_Q (the dmar preset computes neither) there is
    // no subgraph statement: only the results' paths are linked.
    $('neo4j-open').hidden = !hasSt;
    if (hasSt) {
      const params = Object.assign({}, st.params || {}, { roots: (this.view && this.view.roots) || (st.params || {}).roots });
      $('neo4j-open').href = browserLink(url.value, st.cypher, params);
      $('neo4j-stmt').textContent = ':params ' + JSON.stringify(params) + '\n\n' + st.cypher;
    } else {
      $('neo4j-stmt').textContent = ':params ' + JSON.stringify(pp.params || {}) + '\n\n' + pp.cypher;
    }
    $('neo4j-paths-open').hidden = !hasPaths;
    if (hasPaths) $('neo4j-paths-open').href = browserLink(url.value, pp.cypher, pp.params || {});
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
