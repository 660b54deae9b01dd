// DOM helpers of the explorer page.

export const $ = (id) => document.getElementById(id);

// h builds an element: attrs maps to properties (on* to listeners),
// children are nodes or strings (text), null and false are skipped.
export function h(tag, attrs, ...kids) {
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
export const fmt = (x, d = 3) => (typeof x === 'number' && isFinite(x) ? x.toFixed(d) : '–');
export const clear = (el) => { el.replaceChildren(); return el; };
