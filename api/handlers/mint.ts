/**
 * GET /v1/solana/mint-status/{signature}: the flow's MintStatus from the
 * `mint_state` view. An unknown signature is looked up on demand through the
 * tracker; a flow it starts tracking answers once its first observations are in
 * the view (bounded wait), anything else is 404.
 *
 * Cached per data version (`kit.respond`): every landed observation bumps the data
 * version, so a cached status is never behind the view, while pollers get ETag/304
 * and concurrent requests for one signature share one read (and one lookup).
 */
import type { Store } from '../../store/client.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { parsePath, signaturePath } from '../http/params.ts';
import { loadMintState, type MintStepState } from '../read/mint-state.ts';
import { buildMintStatus } from '../read/mint-status.ts';
import type { HandlerDeps, HandlerMap } from './types.ts';

/** Polls the view until the flow has rows or `ms` passed. */
async function waitForRows(store: Store, signature: string, ms: number, clock: () => number) {
  const end = clock() + ms;
  for (;;) {
    const rows = await loadMintState(store, signature);
    if (rows.length || clock() >= end) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The tracker's verdict; its sources failing is an upstream outage (503), whatever the error. */
async function lookup(mintFlow: NonNullable<HandlerDeps['mintFlow']>, signature: string) {
  try {
    return await mintFlow.lookup(signature);
  } catch (e) {
    throw new ApiError('UPSTREAM_UNAVAILABLE', `cannot look up ${signature} on Solana now; retry later`, {
      cause: e,
      headers: { 'Retry-After': '5' },
    });
  }
}

/** The flow's rows, looking an unknown signature up on demand. */
async function flowRows(signature: string, deps: HandlerDeps): Promise<MintStepState[]> {
  const rows = await loadMintState(deps.store, signature);
  if (rows.length) return rows;
  if (!deps.mintFlow || (await lookup(deps.mintFlow, signature)) === 'not_flow')
    throw notFound('mint flow', signature);
  const landed = await waitForRows(deps.store, signature, deps.config.mintFlow.lookupWaitMs, deps.clock);
  if (!landed.length)
    throw new ApiError(
      'UPSTREAM_UNAVAILABLE',
      `mint flow ${signature} is tracked; its status is not stored yet`,
      {
        headers: { 'Retry-After': '2' },
      },
    );
  return landed;
}

export const mintHandlers: HandlerMap = {
  // SQL: views/plain/mint_state.sql (api/read/mint-state.ts).
  'GET /solana/mint-status/{signature}': async (ctx, deps) => {
    const { signature } = parsePath(signaturePath, ctx);
    await deps.kit.respond(ctx, async () => ({
      body: { data: buildMintStatus(signature, await flowRows(signature, deps), deps.config) },
    }));
  },
};
