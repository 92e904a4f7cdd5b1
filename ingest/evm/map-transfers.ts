/**
 * The `transfers` record of a share `Transfer`: nearly every log of a backfill, so one
 * flat record each, built without the per-vault helpers of the other events.
 */
import type { DecodedLog } from './decode.ts';
import type { Args, MapContext, Vault } from './map-context.ts';

/** The `transfers` record of a share `Transfer` for `vault` (the fields of `chainFields`, flat). */
export function transferRecord(ctx: MapContext, d: DecodedLog, vault: Vault) {
  const { log } = d;
  const a = d.args as Args;
  return {
    chainId: ctx.contracts.chain.chainId,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    blockTimestamp: ctx.blockTime(log.blockNumber),
    txHash: log.transactionHash,
    logIndex: log.logIndex,
    removed: false,
    vault: vault.slug,
    token: shareOf(vault),
    from: a.from as string,
    to: a.to as string,
    amount: (a.amount as bigint).toString(),
    // eth_getLogs gives it and the ingester keeps it on the log (ingest/evm/chain.ts parseLog);
    // a log built without one (tests, fixtures) publishes the Avro default, unknown.
    transactionIndex: log.transactionIndex ?? -1,
  };
}

const SHARES = new WeakMap<object, string>();
/** The vault's share address, lower-cased (once per vault). */
function shareOf(vault: Vault): string {
  let share = SHARES.get(vault);
  if (share === undefined) {
    share = vault.vaultAddress.toLowerCase();
    SHARES.set(vault, share);
  }
  return share;
}
