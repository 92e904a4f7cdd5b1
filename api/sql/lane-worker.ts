/**
 * A lane of the analysts' process: a thread with one analysts' connection (read-only, the
 * server's caps: store/read-only-engine.ts) that runs one query at a time (api/sql/lane-protocol.ts).
 * Everything a query costs before its bytes reach a socket happens here, off the thread that
 * serves HTTP: the engine's parse and resolution (chDB's stream starts synchronously, and
 * resolving evaluates scalar subqueries), the checks over the engine's trees, the caps read back,
 * the Native rewrite for the client's revision and the compressed blocks' hashing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLane, unescapeParam } from '../../store/chdb-lane.ts';
import { checkReadOnly, readBackCaps } from '../../store/read-only.ts';
import { checkFormat } from '../../store/read-only-ast.ts';
import { analystConnectionArgs, checkConnectionArgs } from '../../store/read-only-engine.ts';
import { type Lines, readFunctionCatalog } from '../../store/read-only-functions.ts';
import { compressBlocks } from './compressed-blocks.ts';
import { sqlFailure } from './engine-errors.ts';
import type { FromLane, LaneData, LaneRequest, ToLane } from './lane-protocol.ts';
import { nativeForRevision } from './native-revision.ts';
import { binaryHeaderLength, streamForm } from './protocol.ts';

const data = workerData as LaneData;
const port = parentPort;
if (!port) throw new Error('api/sql/lane-worker.ts runs as a worker thread of the analysts process');
const send = (m: FromLane, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer ?? []);

const { Session } = await import('chdb');
/** The query's connection (the analysts' caps), and the one its checks run on (no result caps). */
let session: InstanceType<typeof Session>;
let checker: InstanceType<typeof Session>;
try {
  session = new Session(data.path, { connectionArgs: analystConnectionArgs(data.limits) });
  checker = new Session(data.path, { connectionArgs: checkConnectionArgs(data.limits) });
} catch (err) {
  send({ type: 'failed-start', message: (err as Error).message });
  throw err;
}
const lane = createLane(session);
const checks = createLane(checker);

const linesOf =
  (s: InstanceType<typeof Session>): Lines =>
  async (sql, params) => {
    const res =
      params && Object.keys(params).length
        ? await s.queryBindAsync(sql, params, { format: 'TSVRaw' })
        : await s.queryAsync(sql, { format: 'TSVRaw' });
    const text = Buffer.from(res.bytes()).toString('utf8');
    return text === '' ? [] : text.replace(/\n$/, '').split('\n');
  };
const lines = linesOf(session);
const checkLines = linesOf(checker);
const catalog = await checks.run(() => readFunctionCatalog(checkLines));

/** The request running, with what it waits for. */
let current: { id: number; cancelled: boolean; more?: () => void } | undefined;
const queue: LaneRequest[] = [];

port.on('message', (m: ToLane) => {
  if (m.type === 'run') {
    queue.push(m.request);
    if (queue.length === 1 && !current) void next();
  } else if (current?.id === m.id) {
    if (m.type === 'cancel') current.cancelled = true;
    const more = current.more;
    current.more = undefined;
    more?.();
  }
});

const SELECTS = /^(SelectWithUnionQuery|SelectIntersectExceptQuery|SelectQuery)$/;

/** The header a chunk repeats (api/sql/protocol.ts streamForm), as a length to cut. */
function headerLength(chunk: Buffer, form: NonNullable<ReturnType<typeof streamForm>>): number {
  if (form.header === 'binary') return binaryHeaderLength(chunk, form.lines);
  let at = 0;
  for (let i = 0; i < form.lines; i++) {
    const nl = chunk.indexOf(10, at);
    if (nl < 0) return chunk.length;
    at = nl + 1;
  }
  return at;
}

/**
 * The answer's chunks: a SELECT's in a format that streams as the engine streams it (a repeated
 * header kept once); any other's (a document format, or SHOW, DESCRIBE, EXISTS, EXPLAIN, which
 * chDB does not stream) in one.
 */
async function* answer(kind: string, sql: string, params: Record<string, string>, format: string) {
  const bound = Object.keys(params).length > 0;
  const form = streamForm(format);
  if (SELECTS.test(kind) && form) {
    let first = true;
    const stream = bound
      ? session.queryStreamBind(sql, params, { format })
      : session.queryStream(sql, { format });
    for await (const chunk of stream) {
      let raw = Buffer.from(chunk.raw());
      if (!first && form.header !== 'none') raw = raw.subarray(headerLength(raw, form));
      first = false;
      yield { raw, rows: chunk.numRows };
    }
    return;
  }
  const res = bound
    ? await session.queryBindAsync(sql, params, { format })
    : await session.queryAsync(sql, { format });
  const bytes = res.bytes();
  yield { raw: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), rows: 0 };
}

class Cancelled extends Error {
  override name = 'AbortError';
}

async function next(): Promise<void> {
  const req = queue.shift();
  if (!req) return;
  const state: NonNullable<typeof current> = { id: req.id, cancelled: false };
  current = state;
  const ran: string[] = ['EXPLAIN QUERY TREE ', 'EXPLAIN AST '];
  try {
    await lane.run(() => runQuery(req, state, ran), true);
  } catch (err) {
    send({ type: 'error', id: req.id, error: sqlFailure(err, ran, data.roots, req.query) });
  } finally {
    current = undefined;
    send({ type: 'idle', id: req.id });
    if (queue.length) void next();
  }
}

async function runQuery(req: LaneRequest, state: { cancelled: boolean; more?: () => void }, ran: string[]) {
  const alive = () => {
    if (state.cancelled) throw new Cancelled('Query was cancelled');
  };
  const params = Object.fromEntries(Object.entries(req.params).map(([k, v]) => [k, unescapeParam(v)]));
  const use = `USE \`${req.database.replace(/`/g, '')}\``;
  const checked = await checks.run(async () => {
    await checker.queryAsync(use);
    return checkReadOnly(
      checkLines,
      req.query,
      { current: req.database, served: data.served },
      catalog,
      params,
    );
  }, true);
  await session.queryAsync(use);
  alive();
  const format = checkFormat(checked.format ?? req.defaultFormat);
  const settings = req.settings.join(', ');
  const caps = await readBackCaps(lines, settings, data.limits);
  alive();
  const tail = settings ? ` SETTINGS ${settings}` : '';
  ran.push(tail);
  const sql = `${checked.canonical}${checked.format ? '' : ` FORMAT ${format}`}${tail}`;
  send({ type: 'start', id: req.id, format, caps });
  const native = format.toLowerCase() === 'native' && req.nativeRevision > 0;
  for await (const chunk of answer(checked.kind, sql, params, format)) {
    alive();
    const { raw } = chunk;
    let out = native ? nativeForRevision(raw, req.nativeRevision) : raw;
    if (req.compressBlocks) out = await compressBlocks(out);
    const bytes = out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
    const asked = new Promise<void>((resolve) => {
      state.more = resolve;
    });
    send({ type: 'chunk', id: req.id, bytes, raw: raw.length, rows: chunk.rows }, [bytes]);
    await asked;
    alive();
  }
  send({ type: 'end', id: req.id });
}

send({ type: 'ready' });
