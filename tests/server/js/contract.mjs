// The REST contract, server/openapi.json, checked on every response the tests get
// (daemon.mjs's request() calls check()). The document's schemas are JSON Schema 2020-12,
// as OpenAPI 3.1 defines them, compiled by Ajv; this file finds the operation, the status
// and the media type. lint() checks the document itself against the official OpenAPI 3.1
// schema. The packages are pinned in tests/server/package-lock.json (npm ci by
// tests/server/npm-deps.sh).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';

export const DOC_PATH = fileURLToPath(new URL('../../../server/openapi.json', import.meta.url));
export const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'components', 'security', 'tags', 'webhooks', 'jsonSchemaDialect']);
ajv.addSchema(doc, 'openapi.json');
const compiled = new Map();
export const stats = { checked: 0, bodies: 0 };
process.on('exit', () => { if (stats.checked) console.log(`contract: ${stats.checked} responses checked against server/openapi.json (${stats.bodies} bodies validated)`); });

const pointer = (parts) => '#/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const templates = Object.keys(doc.paths).map((t) => ({
  t, literal: !t.includes('{'),
  re: new RegExp('^' + t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$'),
}));

// The path template a request path matches (literal paths first), or null.
export function route(path) {
  const hits = templates.filter((x) => x.re.test(path));
  return (hits.find((x) => x.literal) ?? hits[0])?.t ?? null;
}

function validate(parts, body) {
  const key = parts.join('\u0000');
  let fn = compiled.get(key);
  if (!fn) {
    fn = ajv.compile({ $ref: 'openapi.json' + pointer(parts) });
    compiled.set(key, fn);
  }
  return fn(body) ? null : ajv.errorsText(fn.errors, { dataVar: 'body' });
}

// Throws when a response is not what the contract says. r: {status, headers, text, json}.
// nginx's own error pages (tests/scale: 502 for a stopped node) are not the daemon's,
// which never answers HTML under an error status: not checked.
export function check(method, url, r) {
  const type0 = r.headers.get('content-type') ?? '';
  if (r.status >= 400 && /^nginx/.test(r.headers.get('server') ?? '') && type0.startsWith('text/html')) return;
  const m = method.toLowerCase();
  const path = new URL(url, 'http://x').pathname;
  const where = `${method} ${path} -> ${r.status}`;
  const fail = (why) => { throw new Error(`contract (server/openapi.json): ${where}: ${why}\n  body: ${(r.text ?? '').slice(0, 400)}`); };
  stats.checked++;
  const t = route(path);
  const errorBody = () => {
    const e = validate(['components', 'schemas', 'Error'], r.json);
    if (e) fail(`not an Error body: ${e}`);
    stats.bodies++;
  };
  if (!t) {
    /* Outside the document: static files of --web-root under "/" (any name), 404 elsewhere. */
    if (!path.startsWith('/v1/') && m === 'get' && (r.status === 200 || r.status === 304)) return;
    if (r.status !== 404) fail('no such path in the document, so the answer must be 404');
    return errorBody();
  }
  const item = doc.paths[t];
  const op = item[m] ?? (m === 'head' ? item.get : undefined);
  if (!op) {
    if (r.status !== 405) fail(`${t} has no ${method}: the answer must be 405`);
    const allow = (r.headers.get('allow') ?? '').split(/,\s*/).map((s) => s.toLowerCase()).sort();
    const want = METHODS.filter((x) => item[x]).concat(item.get ? ['head'] : []).sort();
    if (allow.join() !== want.join()) fail(`Allow: ${r.headers.get('allow')}, the document has ${want.join(', ')}`);
    return errorBody();
  }
  const verb = item[m] ? m : 'get';
  const resp = op.responses[String(r.status)] ?? op.responses.default;
  if (!resp) {
    if (r.status === 500) return errorBody(); // any route, out of memory (info.description)
    fail(`status ${r.status} is not one of ${t} ${verb}'s: ${Object.keys(op.responses).join(', ')}`);
  }
  for (const h of Object.keys(resp.headers ?? {}))
    if (!r.headers.get(h)) fail(`no ${h} header`);
  const type = (r.headers.get('content-type') ?? '').split(';')[0].trim();
  if (!resp.content || m === 'head') {
    if (m !== 'head' && r.text) fail(`the document says no body, got ${type}`);
    return;
  }
  if (!(type in resp.content)) fail(`Content-Type ${type}, the document has ${Object.keys(resp.content).join(', ')}`);
  if (type !== 'application/json') return;
  if (r.json === null && r.text !== 'null') fail('the body is not JSON');
  const e = validate(['paths', t, verb, 'responses', String(resp === op.responses.default ? 'default' : r.status), 'content', type, 'schema'], r.json);
  if (e) fail(e);
  stats.bodies++;
}

// The document against the official OpenAPI 3.1 schema: {valid, errors}.
export async function lint(d = doc) {
  return new Validator().validate(structuredClone(d));
}
