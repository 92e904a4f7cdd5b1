/**
 * The Solana followers' part of `/readyz` (a readiness condition, as api/readiness.ts takes
 * them): not ready while a follower's opening read is not yet all published, since until then
 * chain 101 would answer no holders, or a part of them, as if that were the truth.
 */
import type { SolanaIngest } from './index.ts';

/** The condition `solana` over `ingest`'s followers. */
export function solanaReadiness(ingest: Pick<SolanaIngest, 'progress'>): {
  name: string;
  reasons(): string[];
} {
  return {
    name: 'solana',
    reasons() {
      const waiting = ingest.progress().filter((f) => f.phase !== 'following');
      if (!waiting.length) return [];
      if (ingest.progress().length === 1) return ['opening read not finished'];
      return [`opening read not finished (${waiting.map((f) => f.vault).join(', ')})`];
    },
  };
}
