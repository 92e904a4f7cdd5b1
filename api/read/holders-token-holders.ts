/**
 * GET /token-holders rows: one per (holder address, token address), the EVM vault
 * address with balances summed over every EVM chain and the Solana mint (chain 101)
 * apart, sorted by USD value descending, ties by address (docs/architecture.md, Endpoint semantics).
 *
 * The whole list is too big to hold or to sort per request. Once per data version:
 * 1. The store writes the `token_holder_values` rows of the vaults into a snapshot table
 *    (store/snapshots.ts) keyed by the exact USD value: the view is evaluated once, and no
 *    row passes through this process.
 * 2. The rows are read back in bands of about `BAND_ROWS` rows, a band being a range of
 *    values (cut at sampled quantiles, as exact integers) sorted exactly (value descending,
 *    then address, token). Bands from the highest values down, each sorted, are the whole
 *    list in order. Each band is one short query (the embedded engine, one query at a
 *    time, keeps serving other requests between bands) that sorts only its own rows.
 * 3. Each band is encoded to the response's JSON once and appended to a spill file in the
 *    data directory (store/snapshot-file.ts) that every request of the version streams,
 *    from the start, while later bands are still being encoded.
 *
 * The rows and their USD values are the `token_holder_values` view's (views/plain/token_holder_values.sql:
 * balances summed over the EVM chains on one exact scale, valued at the current share
 * price of `vault_share_usd_current`); this module only orders, encodes and reads them.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../store/client.ts';
import { SnapshotFile, snapshotDir } from '../../store/snapshot-file.ts';
import { createSnapshot, type SnapshotTable } from '../../store/snapshots.ts';
import { SCALE } from './holders-decimals.ts';
import type { RegistryVault } from './registry.ts';

export interface TokenHolder {
  address: string;
  tokenAddress: string;
  balance: number;
  value: number;
}

export interface TokenHolderSnapshot {
  /** Rows in the snapshot (the response's `count`). */
  count: number;
  /** The snapshot table, database-qualified. */
  table: string;
  /** Value bands the rows are read in (each one query). */
  bands: number;
  /** The whole response body, `{"data":{"holders":[...],"count":n}}`, as far as encoded, to the end. */
  body(): AsyncGenerator<Buffer>;
  /** The rows in order, `pageSize` at a time, decoded from the table. */
  pages(pageSize: number): AsyncGenerator<TokenHolder[]>;
  /** Resolves once the body is whole; rejects if encoding it failed. */
  done: Promise<void>;
  /** Drops the table and the body's file (idempotent). */
  drop(): Promise<void>;
}

/** Rows per band: one band's TSV and JSON are the most this process holds at once. */
const BAND_ROWS = 25_000;

const COLUMNS = `value_e18 Int256 COMMENT 'USD value in 10^-18 USD',
  address String COMMENT 'Holder address',
  token String COMMENT 'EVM vault address or Solana mint',
  balance_x Int256 COMMENT 'Balance in 10^-${SCALE} tokens'`;

/** The engine's memory is bounded: one thread, aggregations spilled to disk past 40 MB. */
const FILL_SETTINGS = {
  max_threads: 1,
  optimize_aggregation_in_order: 1,
  max_bytes_before_external_group_by: 40_000_000,
  max_block_size: 16_384,
  max_insert_block_size: 131_072,
  min_insert_block_size_rows: 131_072,
};

export interface SnapshotOptions {
  /** The data directory: the body's file goes to `<dataDir>/snapshots` (default: the temp dir). */
  dataDir?: string;
  /** Rows per band (default `BAND_ROWS`; small in tests, to cut small data into many bands). */
  bandRows?: number;
}

/**
 * Snapshots the sorted (holder, token) list of `vaults`: resolves once the rows are in the
 * table and counted (the body is readable from then on); the body's encoding goes on in the
 * background until `done`.
 */
export async function snapshotTokenHolders(
  store: Store,
  vaults: readonly RegistryVault[],
  opts: SnapshotOptions = {},
): Promise<TokenHolderSnapshot> {
  const snap = await createSnapshot(store, {
    prefix: 'token_holders_snapshot_',
    columns: COLUMNS,
    orderBy: 'value_e18',
    comment: 'Snapshot of GET /token-holders for one data version; dropped once superseded and unread',
    select: `SELECT value_usd_e18 AS value_e18, address, token, balance_e36 AS balance_x
      FROM ${store.database}.token_holder_values WHERE vault IN {slugs:Array(String)}`,
    params: { slugs: vaults.map((v) => v.slug) },
    settings: FILL_SETTINGS,
  });
  let file: SnapshotFile | undefined;
  try {
    const bands = await bandsOf(store, snap, opts.bandRows ?? BAND_ROWS);
    file = await SnapshotFile.create(
      snapshotDir(opts.dataDir ?? join(tmpdir(), 'vaultstream')),
      `${snap.name}.json`,
    );
    const out = file;
    const done = encodeBody(store, snap, bands, out);
    done.catch(() => undefined);
    return {
      count: snap.rows,
      table: snap.table,
      bands: bands.length,
      body: () => out.read(),
      pages: (size) => readPages(store, snap, bands, size),
      done,
      drop: async () => {
        await out.remove();
        await snap.drop();
      },
    };
  } catch (err) {
    await file?.remove();
    await snap.drop().catch(() => undefined);
    throw err;
  }
}

/** The bands' conditions, highest values first; together they take every row once. */
async function bandsOf(store: Store, snap: SnapshotTable, bandRows: number): Promise<string[]> {
  const n = Math.min(Math.ceil(snap.rows / bandRows), 1000);
  if (n <= 1) return ['1'];
  const levels = Array.from({ length: n - 1 }, (_, i) => (i + 1) / n);
  // Sampled quantiles, as integers: the cuts are exact values (toInt256 of a decimal
  // string), so neighbouring bands meet exactly; equal cuts (many equal values) are merged.
  const [{ q }] = await store.query<{ q: string[] }>(
    `SELECT arrayMap(x -> toString(toInt256(x)), quantiles(${levels.join(', ')})(toFloat64(value_e18))) AS q
     FROM ${snap.table}`,
  );
  const cuts = [...new Set(q.map((x) => BigInt(x)))].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  const at = (c: bigint) => `toInt256('${c}')`;
  return cuts
    .map((c, i) =>
      i === 0 ? `value_e18 >= ${at(c)}` : `value_e18 >= ${at(c)} AND value_e18 < ${at(cuts[i - 1])}`,
    )
    .concat([`value_e18 < ${at(cuts[cuts.length - 1])}`]);
}

/** One band's rows in response order, as TabSeparated `address, token, balance_x, value_e18`. */
function bandSql(table: string, where: string): string {
  return `SELECT address, token, balance_x, value_e18 FROM ${table} WHERE ${where}
    ORDER BY value_e18 DESC, address, token SETTINGS max_threads = 1 FORMAT TabSeparated`;
}

/** The bands' TSV in order, the next band's query running while the caller handles this one. */
async function* bandBytes(store: Store, snap: SnapshotTable, bands: string[]): AsyncGenerator<Buffer> {
  let next = store.queryRaw(bandSql(snap.table, bands[0]));
  for (let i = 0; i < bands.length; i++) {
    const { bytes } = await next;
    if (i + 1 < bands.length) {
      next = store.queryRaw(bandSql(snap.table, bands[i + 1]));
      next.catch(() => undefined); // awaited on the next turn; a failure surfaces there
    }
    yield bytes;
  }
}

/** Fields of the TSV lines of a band (TabSeparated escapes: undone where a backslash appears). */
function* tsvRows(bytes: Buffer): Generator<string[]> {
  const text = bytes.toString('utf8');
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    const f = line.split('\t');
    yield line.includes('\\') ? f.map(unescapeTsv) : f;
  }
}

const TSV_ESCAPES: Record<string, string> = {
  t: '\t',
  n: '\n',
  r: '\r',
  '0': '\0',
  b: '\b',
  f: '\f',
  '\\': '\\',
};

function unescapeTsv(s: string): string {
  return s.replace(/\\(.)/g, (_, c: string) => TSV_ESCAPES[c] ?? c);
}

/** `digits / 10^decimals` as the nearest number: `toUnits` of api/read/prices.ts, from the digits. */
function units(digits: string, decimals: number): number {
  const neg = digits.startsWith('-');
  const s = (neg ? digits.slice(1) : digits).padStart(decimals + 1, '0');
  const n = Number(`${s.slice(0, -decimals)}.${s.slice(-decimals)}`);
  return neg ? -n : n;
}

/** One row as the response writes it (`JSON.stringify` of a `TokenHolder`, field for field). */
function rowJson(address: string, token: string, balance: string, value: string): string {
  return `{"address":${JSON.stringify(address)},"tokenAddress":${JSON.stringify(token)},"balance":${JSON.stringify(
    units(balance, SCALE),
  )},"value":${JSON.stringify(units(value, 18))}}`;
}

/** Bytes appended into one growing buffer (no long-lived strings). */
class Bytes {
  private buf: Buffer;
  length = 0;
  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(Math.max(capacity, 1024));
  }
  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(bigger, 0, 0, this.length);
    this.buf = bigger;
  }
  /** Appends a string as UTF-8. */
  push(s: string): void {
    this.ensure(s.length * 3);
    this.length += this.buf.write(s, this.length);
  }
  /** Appends bytes `from`..`to` of `src` (room ensured by the caller). */
  copy(src: Buffer, from = 0, to = src.length): void {
    this.length += src.copy(this.buf, this.length, from, to);
  }
  /** Appends an ASCII string (room ensured by the caller). */
  ascii(s: string): void {
    this.length += this.buf.write(s, this.length, 'latin1');
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * True when the band's bytes are printable ASCII besides its tabs and newlines, with no quote
 * or backslash: then every field is a JSON string's content as it is (and unescaped TSV).
 */
function plainBytes(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c >= 0x20 ? c === 0x22 || c === 0x5c || c >= 0x7f : c !== 0x09 && c !== 0x0a) return false;
  }
  return true;
}

const ADDRESS = Buffer.from('{"address":"');
const TOKEN = Buffer.from('","tokenAddress":"');
const BALANCE = Buffer.from('","balance":');
const VALUE = Buffer.from(',"value":');
/** Bytes of a row besides its two strings and two numbers (a number is at most 24 characters). */
const ROW_EXTRA = 1 + ADDRESS.length + TOKEN.length + BALANCE.length + VALUE.length + 1 + 2 * 24;

/** A band's rows as the body's JSON, comma-separated (each preceded by a comma unless `first`). */
function encodeBand(bytes: Buffer, first: boolean): Buffer {
  // The JSON is about 1.6 times the TSV (the field names).
  const out = new Bytes(Math.ceil(bytes.length * 1.7));
  if (!plainBytes(bytes)) {
    // Escapes or non-ASCII text: the general path, through strings.
    for (const f of tsvRows(bytes)) {
      out.push(`${first ? '' : ','}${rowJson(f[0], f[1], f[2], f[3])}`);
      first = false;
    }
    return out.bytes();
  }
  // Plain bytes: the strings are copied as they are; only the numbers go through strings.
  let start = 0;
  while (start < bytes.length) {
    const t1 = bytes.indexOf(0x09, start);
    const t2 = bytes.indexOf(0x09, t1 + 1);
    const t3 = bytes.indexOf(0x09, t2 + 1);
    let end = bytes.indexOf(0x0a, t3 + 1);
    if (end < 0) end = bytes.length;
    out.ensure(t2 - start + ROW_EXTRA);
    if (!first) out.ascii(',');
    first = false;
    out.copy(ADDRESS);
    out.copy(bytes, start, t1);
    out.copy(TOKEN);
    out.copy(bytes, t1 + 1, t2);
    out.copy(BALANCE);
    out.ascii(JSON.stringify(units(bytes.toString('latin1', t2 + 1, t3), SCALE)));
    out.copy(VALUE);
    out.ascii(JSON.stringify(units(bytes.toString('latin1', t3 + 1, end), 18)));
    out.ascii('}');
    start = end + 1;
  }
  return out.bytes();
}

/** Writes the response body to `file`, band by band. */
async function encodeBody(
  store: Store,
  snap: SnapshotTable,
  bands: string[],
  file: SnapshotFile,
): Promise<void> {
  try {
    await file.append(Buffer.from('{"data":{"holders":['));
    let first = true;
    for await (const bytes of bandBytes(store, snap, bands)) {
      if (bytes.length === 0) continue;
      await file.append(encodeBand(bytes, first));
      first = false;
    }
    await file.append(Buffer.from(`],"count":${snap.rows}}}`));
    await file.finish();
  } catch (err) {
    await file.fail(err);
    throw err;
  }
}

async function* readPages(
  store: Store,
  snap: SnapshotTable,
  bands: string[],
  size: number,
): AsyncGenerator<TokenHolder[]> {
  let page: TokenHolder[] = [];
  for await (const bytes of bandBytes(store, snap, bands)) {
    for (const f of tsvRows(bytes)) {
      page.push({ address: f[0], tokenAddress: f[1], balance: units(f[2], SCALE), value: units(f[3], 18) });
      if (page.length === size) {
        yield page;
        page = [];
      }
    }
  }
  if (page.length) yield page;
}
