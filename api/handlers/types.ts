/**
 * What every endpoint handler is given and returns. Handlers live in one file per
 * domain (`vaults.ts`, `history.ts`, `holders.ts`, `activity.ts`, `fees.ts`,
 * `mint.ts`, `build-tx.ts`), each exporting a `HandlerMap`; `index.ts` merges them
 * and the server mounts one route per entry of `ENDPOINTS`.
 */
import type { Context } from 'koa';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import type { Store } from '../../store/client.ts';
import type { HttpKit } from '../http/kit.ts';
import type { EndpointKey } from '../http/responses.ts';
import type { Readiness } from '../readiness.ts';
import type { SnapshotLink } from '../snapshot-readiness.ts';

export interface HandlerDeps {
  store: Store;
  config: Config;
  /** The response cache and `respond` (cached, ETag, compression). */
  kit: HttpKit;
  /** Milliseconds since the epoch; injectable so time-relative defaults are testable. */
  clock: () => number;
  log: Logger;
  /** The data version (changes when new data lands); absent in stand-in apps. */
  dataVersion?: () => number | string;
  /** On-demand mint-flow lookup of an unknown signature (the tracker); absent = unknown is 404. */
  mintFlow?: { lookup(signature: string): Promise<'tracked' | 'not_flow'> };
  /** `/readyz`'s check: until the process is first ready, endpoints whose data it waits for answer 503 (api/handlers/not-built.ts). */
  readiness?: Pick<Readiness, 'check'>;
  /** Where the snapshots report to readiness (api/snapshot-readiness.ts); absent in stand-in apps. */
  snapshots?: SnapshotLink;
}

/** Handles one endpoint: validates its inputs (api/http/params.ts) and answers. */
export type Handler = (ctx: Context, deps: HandlerDeps) => Promise<void>;

export type HandlerMap = Partial<Record<EndpointKey, Handler>>;
