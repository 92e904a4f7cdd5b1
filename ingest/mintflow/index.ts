/** The Solana mint-flow tracker (see tracker.ts). */

export type { MintFlowSources } from './sources.ts';
export { type MintFlowTracker, type MintFlowTrackerOptions, startMintFlowTracker } from './tracker.ts';
