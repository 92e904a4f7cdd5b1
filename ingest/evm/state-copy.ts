/**
 * The follower's copies of its state (ingest/evm/follower.ts): the state to go back to when a
 * publish in flight fails, and the checkpoint written once that publish is durable.
 */
import type { ChainCheckpoint } from './reorg.ts';

/**
 * A copy of `state` that the follower's later rounds leave as it is: they replace its fields
 * (the tip, the marks) rather than change them, except a tip block's event list, which grows
 * (kept rates) and is copied here; the records themselves are never changed. Cheaper than a
 * deep copy: on a dense chain the tip holds the records of a whole window of blocks.
 */
export function copyState(state: ChainCheckpoint): ChainCheckpoint {
  return { ...state, tip: state.tip.map((b) => ({ ...b, events: [...b.events] })) };
}
