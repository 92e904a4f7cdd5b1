/**
 * Requests with hostile content negotiation, body encodings and methods, each with the JSON 4xx it must get: shared by the errors and fuzz tests.
 */
const GOOD = { chainId: 98866, user: `0x${'aB'.repeat(20)}`, enabled: true };

/** Bad negotiation, encodings and methods are JSON 4xx, never a 5xx or plain text. */
export const HOSTILE_REQUESTS: {
  what: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  status: number;
  code: string;
}[] = [
  {
    what: 'Accept-Encoding identity;q=0 on a large cached body',
    method: 'GET',
    path: '/v1/test/big',
    headers: { 'accept-encoding': 'identity;q=0' },
    status: 406,
    code: 'NOT_ACCEPTABLE',
  },
  {
    what: 'Accept-Encoding *;q=0 on the docs page (compression middleware)',
    method: 'GET',
    path: '/docs',
    headers: { 'accept-encoding': '*;q=0' },
    status: 406,
    code: 'NOT_ACCEPTABLE',
  },
  {
    what: 'Accept-Encoding identity;q=0 on a small answer',
    method: 'GET',
    path: '/v1/vaults',
    headers: { 'accept-encoding': 'identity;q=0, deflate' },
    status: 406,
    code: 'NOT_ACCEPTABLE',
  },
  {
    what: 'Content-Encoding gzip on a body that is not gzip',
    method: 'POST',
    path: '/v1/auto-claim/build-tx',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: JSON.stringify(GOOD),
    status: 400,
    code: 'BAD_BODY',
  },
  {
    what: 'Content-Encoding deflate on a body that is not deflate',
    method: 'POST',
    path: '/v1/auto-claim/build-tx',
    headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
    body: 'garbage',
    status: 400,
    code: 'BAD_BODY',
  },
  {
    what: 'an unknown Content-Encoding',
    method: 'POST',
    path: '/v1/auto-claim/build-tx',
    headers: { 'content-type': 'application/json', 'content-encoding': 'x-rot13' },
    body: JSON.stringify(GOOD),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: 'TRACE on a known path',
    method: 'TRACE',
    path: '/v1/vaults',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    what: 'PROPFIND on a known path',
    method: 'PROPFIND',
    path: '/v1/vaults/details',
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    what: 'PROPFIND on an unknown path',
    method: 'PROPFIND',
    path: '/v1/nope',
    status: 501,
    code: 'NOT_IMPLEMENTED',
  },
];
