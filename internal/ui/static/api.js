// The API of the server that served the page, with the key asked for once
// per session and kept in sessionStorage.
import { $ } from './dom.js';

export const KEY = 'dmar.apiKey';

export class ApiError extends Error {
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

export function settleKey(key) {
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

export function showKey() {
  const has = !!sessionStorage.getItem(KEY);
  $('key-status').textContent = has ? 'API key set for this session' : '';
  $('key-forget').hidden = !has;
}

export async function api(method, path, body) {
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

export function showError(err, what) {
  const el = $('error');
  if (!err) { el.hidden = true; el.textContent = ''; return; }
  const status = err.status ? err.status + ' ' : '';
  const code = err.code ? err.code + ': ' : '';
  el.textContent = (what ? what + ' failed: ' : '') + status + code + err.message + (err.field ? ' (field: ' + err.field + ')' : '');
  el.hidden = false;
}
