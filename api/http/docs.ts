/**
 * The human-readable API reference at `/docs`: one self-contained HTML page
 * rendered on the server from the OpenAPI document (inline CSS, no scripts, no
 * external assets), and the handlers serving it and `/v1/openapi.json`.
 */
import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import { etagMatches } from './encoding.ts';

type Json = Record<string, any>;

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Escapes text and renders `code` spans. */
const prose = (s: unknown) => escapeHtml(String(s ?? '')).replace(/`([^`]+)`/g, '<code>$1</code>');

const refName = (ref: string) => ref.split('/').pop() ?? ref;
const refLink = (ref: string) =>
  `<a href="#schema-${escapeHtml(refName(ref))}">${escapeHtml(refName(ref))}</a>`;

/** A one-line summary of a parameter schema: type, format, enum, bounds, pattern, default. */
function typeSummary(s: Json): string {
  if (s.$ref) return refLink(s.$ref);
  const parts: string[] = [];
  if (s.type === 'array') parts.push(`array of ${s.items ? typeSummary(s.items) : 'any'}`);
  else parts.push(escapeHtml(String(s.type ?? 'any')));
  if (s.format) parts.push(`(${escapeHtml(s.format)})`);
  if (s.enum)
    parts.push(`one of ${s.enum.map((v: unknown) => `<code>${escapeHtml(String(v))}</code>`).join(', ')}`);
  if (s.minimum !== undefined || s.maximum !== undefined)
    parts.push(`${s.minimum ?? ''}..${s.maximum ?? ''}`);
  if (s.minLength !== undefined) parts.push(`min length ${s.minLength}`);
  if (s.pattern) parts.push(`pattern <code>${escapeHtml(s.pattern)}</code>`);
  if (s.default !== undefined) parts.push(`default <code>${escapeHtml(JSON.stringify(s.default))}</code>`);
  return parts.join(' ');
}

/** Pretty JSON with `$ref`s turned into in-page links. */
function schemaBlock(schema: unknown): string {
  const html = escapeHtml(JSON.stringify(schema, null, 2)).replace(
    /&quot;(#\/components\/schemas\/[A-Za-z0-9_]+)&quot;/g,
    (_m, ref: string) => `&quot;${refLink(ref)}&quot;`,
  );
  return `<pre>${html}</pre>`;
}

function parameterTable(params: Json[]): string {
  if (params.length === 0) return '<p class="muted">No parameters.</p>';
  const rows = params
    .map(
      (p) =>
        `<tr><td><code>${escapeHtml(p.name)}</code>${p.required ? ' <b>*</b>' : ''}${p.deprecated ? ' <i>deprecated</i>' : ''}</td>` +
        `<td>${escapeHtml(p.in)}</td><td>${typeSummary(p.schema ?? {})}</td><td>${prose(p.description)}</td></tr>`,
    )
    .join('');
  return `<table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Rule</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function responseList(responses: Json, doc: Json): string {
  const items = Object.entries(responses).map(([status, r]) => {
    const resolved = r.$ref ? doc.components?.responses?.[refName(r.$ref)] : r;
    const schemas = Object.entries(resolved?.content ?? {})
      .map(
        ([type, c]: [string, any]) =>
          `${escapeHtml(type)}: ${c.schema?.$ref ? refLink(c.schema.$ref) : 'text'}`,
      )
      .join('; ');
    return `<li><b>${escapeHtml(status)}</b> ${prose(resolved?.description)}${schemas ? ` (${schemas})` : ''}</li>`;
  });
  return `<ul>${items.join('')}</ul>`;
}

function operationSection(path: string, method: string, op: Json, doc: Json): string {
  const id = escapeHtml(op.operationId ?? `${method}-${path}`);
  const body = op.requestBody?.content?.['application/json']?.schema;
  return [
    `<section class="op" id="${id}">`,
    `<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code></h3>`,
    `<p><b>${prose(op.summary)}</b></p><p>${prose(op.description)}</p>`,
    '<h4>Parameters</h4>',
    parameterTable(op.parameters ?? []),
    body ? `<h4>Request body (application/json)</h4>${schemaBlock(body)}` : '',
    '<h4>Responses</h4>',
    responseList(op.responses ?? {}, doc),
    '</section>',
  ].join('\n');
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1d2330}
nav{width:290px;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f4f6fa;padding:16px;box-sizing:border-box;font-size:13px}
nav a{display:block;color:#1d2330;text-decoration:none;padding:2px 0}main{padding:24px 40px;max-width:1000px}
code,pre{font:13px ui-monospace,monospace}pre{background:#f4f6fa;padding:12px;overflow:auto;max-height:420px}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #d9dde6;padding:4px 8px;text-align:left;vertical-align:top}
.method{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}.get{background:#2f7d4f}.post{background:#2a5db0}
.op{border-top:1px solid #d9dde6;padding-top:8px}.muted{color:#6b7385}`;

/** Renders the whole reference page of `doc` (an OpenAPI 3.1 document). */
export function renderDocsHtml(doc: Json, opts: { specUrl?: string } = {}): string {
  const specUrl = opts.specUrl ?? '/v1/openapi.json';
  const base = doc.servers?.[0]?.url ?? '';
  const ops: { path: string; method: string; op: Json }[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {}))
    for (const [method, op] of Object.entries<Json>(item)) ops.push({ path: `${base}${path}`, method, op });
  const nav = ops
    .map(
      (o) =>
        `<a href="#${escapeHtml(o.op.operationId)}">${escapeHtml(o.method.toUpperCase())} ${escapeHtml(o.path)}</a>`,
    )
    .join('\n');
  const schemas = Object.entries<Json>(doc.components?.schemas ?? {})
    .map(
      ([name, s]) =>
        `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3>${schemaBlock(s)}</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(doc.info?.title ?? 'API')} API reference</title><style>${STYLE}</style></head>
<body><nav><b>${escapeHtml(doc.info?.title ?? 'API')} ${escapeHtml(doc.info?.version ?? '')}</b>
<p><a href="${escapeHtml(specUrl)}">OpenAPI document (JSON)</a></p>${nav}<p><a href="#schemas">Schemas</a></p></nav>
<main><h1>${escapeHtml(doc.info?.title ?? 'API')} API reference</h1><p>${prose(doc.info?.description)}</p>
<p>Base path: <code>${escapeHtml(base)}</code>. OpenAPI ${escapeHtml(doc.openapi ?? '')}.</p>
${ops.map((o) => operationSection(o.path, o.method, o.op, doc)).join('\n')}
<h2 id="schemas">Schemas</h2>
${schemas}
</main></body></html>
`;
}

/** Serves fixed bytes with a strong ETag, 304 on `If-None-Match`, and a short public cache life. */
export function staticResponse(body: string, contentType: string, maxAgeSeconds = 300): Middleware {
  const bytes = Buffer.from(body);
  const etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
  return (ctx) => {
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', `public, max-age=${maxAgeSeconds}`);
    if (etagMatches(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = contentType;
    ctx.body = bytes;
  };
}

/** `GET /v1/openapi.json`. */
export function serveOpenApi(doc: Json): Middleware {
  return staticResponse(JSON.stringify(doc), 'application/json; charset=utf-8');
}

/** `GET /docs`. */
export function serveDocs(doc: Json, opts: { specUrl?: string } = {}): Middleware {
  return staticResponse(renderDocsHtml(doc, opts), 'text/html; charset=utf-8');
}
