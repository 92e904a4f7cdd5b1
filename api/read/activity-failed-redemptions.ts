/**
 * GET /vaults/{slug}/failed-redemptions (docs/architecture.md, Endpoint semantics): queue requests whose
 * latest update has amount > 0, with no fill (nor cancellation) after it, whose
 * deadline has passed. `isValid` = the user's balance on the request's chain, from
 * every transfer up to the deadline, was at least the requested shares.
 */
import type { Store } from '../../store/client.ts';
import { chainDecimals } from './holders-decimals.ts';
import { toUnits } from './prices.ts';
import type { RegistryVault } from './registry.ts';

export interface FailedRedemption {
  requestTransactionHash: string;
  user: string;
  chainId: number;
  amount: number;
  requestedAt: number;
  expiresAt: number;
  queueAddress: string;
  wantTokenContractAddress: string;
  minPrice: number;
  isValid: boolean;
}

export interface FailedRedemptionFilter {
  /** Unix seconds; deadlines at or before it have passed. */
  now: number;
  startDate: number;
  endDate?: number;
  user?: string;
  chainId?: number;
  queueAddress?: string;
}

interface Row {
  chain_id: number;
  queue: string;
  user: string;
  request_tx_hash: string;
  amount_s: string;
  min_price_s: string;
  want_token: string;
  want_decimals: number;
  requested_at: string;
  expires_at: string;
  valid: number;
}

/** The failed redemptions of `v` matching `f`, latest deadline first. */
export async function failedRedemptions(
  store: Store,
  v: RegistryVault,
  f: FailedRedemptionFilter,
): Promise<FailedRedemption[]> {
  const db = store.database;
  const where = [
    'vault = {slug:String}',
    'amount > 0',
    'last_fill_pos < last_request_pos',
    'last_cancel_pos < last_request_pos',
    "deadline <= toDateTime({now:Int64}, 'UTC')",
    "deadline >= toDateTime({start:Int64}, 'UTC')",
    ...(f.endDate === undefined ? [] : ["deadline <= toDateTime({end:Int64}, 'UTC')"]),
    ...(f.user === undefined ? [] : ['lower(user) = {user:String}']),
    ...(f.chainId === undefined ? [] : ['chain_id = {chain:UInt32}']),
    ...(f.queueAddress === undefined ? [] : ['lower(queue) = {queue:String}']),
  ];
  const rows = await store.query<Row>(
    `WITH req AS (
       SELECT chain_id, queue, request_id, user, request_tx_hash, amount, min_price, want_token, want_decimals,
         requested_at, deadline
       FROM ${db}.redemption_requests WHERE ${where.join(' AND ')}
     ),
     moves AS (
       SELECT chain_id, side.1 AS holder, side.2 AS d, block_time
       FROM ${db}.transfers
       ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
       WHERE vault = {slug:String} AND (chain_id, side.1) IN (SELECT chain_id, user FROM req)
     )
     SELECT r.chain_id AS chain_id, r.queue AS queue, r.user AS user, r.request_tx_hash AS request_tx_hash,
       toString(r.amount) AS amount_s, toString(r.min_price) AS min_price_s, r.want_token AS want_token,
       r.want_decimals AS want_decimals, toString(toUnixTimestamp(r.requested_at)) AS requested_at,
       toString(toUnixTimestamp(r.deadline)) AS expires_at,
       sum(if(m.block_time <= r.deadline, m.d, toInt256(0))) >= toInt256(r.amount) AS valid
     FROM req AS r
     LEFT JOIN moves AS m ON m.chain_id = r.chain_id AND m.holder = r.user
     GROUP BY r.chain_id, r.queue, r.request_id, r.user, r.request_tx_hash, r.amount, r.min_price, r.want_token,
       r.want_decimals, r.requested_at, r.deadline
     ORDER BY r.deadline DESC, r.chain_id, r.request_tx_hash`,
    {
      slug: v.slug,
      now: f.now,
      start: f.startDate,
      ...(f.endDate !== undefined && { end: f.endDate }),
      ...(f.user !== undefined && { user: f.user }),
      ...(f.chainId !== undefined && { chain: f.chainId }),
      ...(f.queueAddress !== undefined && { queue: f.queueAddress }),
    },
  );
  return rows.map((r) => ({
    requestTransactionHash: r.request_tx_hash,
    user: r.user,
    chainId: Number(r.chain_id),
    amount: toUnits(BigInt(r.amount_s), chainDecimals(v, Number(r.chain_id))),
    requestedAt: Number(r.requested_at),
    expiresAt: Number(r.expires_at),
    queueAddress: r.queue,
    wantTokenContractAddress: r.want_token,
    minPrice: toUnits(BigInt(r.min_price_s), Number(r.want_decimals)),
    isValid: Number(r.valid) === 1,
  }));
}
