/**
 * chDB's session keeps what a failed query's output format had already written (a
 * `WithNames` header, JSON's opening `{"meta": ...}`, ...) and hands it out at the start of the
 * next query's result on that session, whoever runs it. Measured on chdb 3.4.0 (libchdb 26.x),
 * single-shot and streamed alike: after `SELECT 1 AS \`x\` FROM numbers(200000) WHERE
 * throwIf(number > 70000) FORMAT TSVRawWithNames` fails, a plain `SELECT 1` returns `x\n1\n`.
 * The leak is in libchdb, below the Node binding and `@clickhouse/client`'s connection
 * wrapper: its client (programs/local/ChdbClient.cpp, `executeMaterializedQuery` and
 * `executeStreamingIterate`) returns the error without resetting the query output vector, and the
 * next successful query steals that vector with its own output appended. Cancelled streams
 * leave nothing; a failure leaves whatever the format wrote before it.
 *
 * The engine library cannot be rebuilt here, so the store clears the session after every call
 * that did not succeed, inside the same turn of its lock (nothing else runs in between): it runs
 * a sentinel query until the sentinel comes back alone, and refuses to go on if it never does.
 */
import { randomUUID } from 'node:crypto';
import { VaultstreamError } from '../core/errors.ts';

/** The part of chDB's session this needs: one single-shot query returning its bytes. */
export interface ChdbQuery {
  queryAsync(sql: string, opts?: { format?: string }): Promise<{ bytes(): Uint8Array }>;
}

/** Sentinel queries a clear may take: the first returns the leftover, the second proves it gone. */
const MAX_ROUNDS = 3;

/**
 * Empties the session's output left by a failed query. Returns the bytes that were left (empty
 * when there were none), so a caller or a test can see what would have leaked.
 */
export async function clearLeftOutput(chdb: ChdbQuery): Promise<Buffer> {
  const sentinel = `vs-clear-${randomUUID()}`;
  const expected = Buffer.from(`${sentinel}\n`);
  const left: Buffer[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const raw = (await chdb.queryAsync(`SELECT '${sentinel}'`, { format: 'TSVRaw' })).bytes();
    const out = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    if (out.equals(expected)) return Buffer.concat(left);
    // Whatever comes before the sentinel was left by an earlier query; the next round checks
    // that taking this result emptied the session.
    const at = out.lastIndexOf(expected);
    left.push(at < 0 ? out : out.subarray(0, at));
  }
  throw new VaultstreamError(
    'STORE_UNAVAILABLE',
    `the embedded engine keeps returning another query's output (${MAX_ROUNDS} sentinel queries came back with extra bytes): refusing to use the session`,
    { retryable: false },
  );
}
