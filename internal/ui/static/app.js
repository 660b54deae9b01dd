// dmar explorer: one question at a time against the server that served this
// page (relative URLs only; the server's Content-Security-Policy forbids any
// other host). Everything from the server is written with textContent,
// never as HTML: documents are user text.
import { $, h, fmt, clear } from './dom.js';
import { ApiError, api, showError, showKey, settleKey, KEY } from './api.js';
import { graph, state, label, learnLabels, stepText } from './graph.js';

// ---- asking --------------------------------------------------------------

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
  const nb = b.ranker && b.ranker.named_by;
  if (nb) {
    const by = (res.results || []).find((x) => x.id === nb);
    items.push(h('li', { class: 'via-title' }, h('strong', {}, 'title link: '), 'the text of ', (by && by.title) || nb, ' names this page (title_links)'));
  }
  const qe = new Set((res.query_entities || []).map((e) => e.qid));
  const bridge = (d.entities || []).filter((q) => qe.has(q));
  if (bridge.length) items.push(h('li', { class: 'via-mention' }, h('strong', {}, 'mention bridge: '), 'the document mentions ', bridge.map(label).join(', ')));
  if (!items.length) items.push(h('li', { class: 'muted' }, 'text search only: ', b.explain || 'no path from the question’s entities'));
  else if (b.explain) items.push(h('li', { class: 'muted' }, 'search: ', b.explain));
  return h('ul', { class: 'carried' }, items);
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
  if (b.ranker && b.ranker.named_by) return 'named by ' + b.ranker.named_by;
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
  $('neo4j-url').addEventListener('change', () => graph.browserChanged());
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
