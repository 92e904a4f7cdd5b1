/** Types shared by the vault metric and history readers, inferred from the response schemas. */
import type { z } from 'zod';
import type { apyBlock } from '../http/resources.ts';

/** Rolling 7-day, 30-day and SEC 30-day APY in percent; null members where history is missing. */
export type ApyBlock = z.infer<typeof apyBlock>;

/** Every member null: nothing to compute from. */
export const NULL_APY: ApyBlock = { rolling7d: null, rolling30d: null, sec30d: null };
