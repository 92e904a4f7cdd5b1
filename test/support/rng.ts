import { Rng } from '../../devnet/sim/rng.ts';

/** mulberry32 (the devnet simulator's `Rng`): a seeded PRNG returning floats in [0, 1), for reproducible test data. */
export function seededRandom(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}
