/**
 * The API reference at `/docs`: Swagger UI (the `swagger-ui-dist` package, served from this process:
 * no CDN, the page works offline) over the generated OpenAPI document at `/v1/openapi.json`, with
 * "Try it out" sending the request to this service (the document's server is the relative `/v1`).
 * The units, formulas and error codes are the document's own (its description and each
 * operation's responses). The handlers serving the page, its assets and the document.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { etagMatches } from './encoding.ts';

type Json = Record<string, any>;

const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files under `/docs/assets/`: name -> [bytes, content type]. */
function assets(): Map<string, [Buffer, string]> {
  const js = 'application/javascript; charset=utf-8';
  return new Map([
    ['swagger-ui-bundle.js', [readFileSync(join(SWAGGER_UI, 'swagger-ui-bundle.js')), js]],
    ['swagger-ui.css', [readFileSync(join(SWAGGER_UI, 'swagger-ui.css')), 'text/css; charset=utf-8']],
    ['docs.js', [Buffer.from(INIT), js]],
  ]);
}

/**
 * The page's script (a file, not inline: a Content-Security-Policy without 'unsafe-inline' allows
 * it). No validator (Swagger UI would send the document to validator.swagger.io), no outside link.
 */
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
    presets: [SwaggerUIBundle.presets.apis],
  });
});
`;

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The page: Swagger UI's stylesheet and bundle, and its start (docs.js). */
export function renderDocsHtml(doc: Json): string {
  const title = `${escapeHtml(doc.info?.title ?? 'API')} API reference`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="data:,"></head>
<body><noscript>This page needs JavaScript; the OpenAPI document is <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body></html>
`;
}

/** Serves fixed bytes with a strong ETag, 304 on `If-None-Match`, and a short public cache life. */
export function staticResponse(body: string | Buffer, contentType: string, maxAgeSeconds = 300): Middleware {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
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

/** Adds `GET /v1/openapi.json`, `GET /docs` and its assets to `router`. */
export function mountDocsRoutes(router: Router, doc: Json): void {
  router.get('/v1/openapi.json', staticResponse(JSON.stringify(doc), 'application/json; charset=utf-8'));
  router.get('/docs', staticResponse(renderDocsHtml(doc), 'text/html; charset=utf-8'));
  const files = new Map([...assets()].map(([name, [bytes, type]]) => [name, staticResponse(bytes, type)]));
  router.get('/docs/assets/:name', (ctx, next) => {
    const serve = files.get(ctx.params.name);
    if (!serve) {
      ctx.status = 404;
      ctx.body = { error: `no docs asset ${ctx.params.name}`, code: 'NOT_FOUND' };
      return;
    }
    return serve(ctx, next);
  });
}
