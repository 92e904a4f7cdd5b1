/**
 * The retry settings of an RPC client (`maxAttempts`, `backoffMs`, `maxBackoffMs`, `jitter`), as
 * core/retry.ts reads them: one definition for the EVM ingestion's and Solana's, which differ in
 * their defaults and in what one attempt covers.
 */
import { z } from 'zod';

export interface RetryDefaults {
  /** What `maxAttempts` counts, for the settings reference. */
  attempts: string;
  maxAttempts: number;
  backoffMs: number;
  /** Lowest `backoffMs` and `maxBackoffMs` accepted. */
  minBackoffMs: number;
}

/** The four retry fields, to spread into a settings object. */
export function retryShape(d: RetryDefaults) {
  return {
    maxAttempts: z.number().int().min(1).max(20).default(d.maxAttempts).describe(d.attempts),
    backoffMs: z
      .number()
      .int()
      .min(d.minBackoffMs)
      .max(60_000)
      .default(d.backoffMs)
      .describe('First retry delay of a failed request; doubles on each attempt.'),
    maxBackoffMs: z
      .number()
      .int()
      .min(d.minBackoffMs)
      .max(600_000)
      .default(10_000)
      .describe('Longest retry delay.'),
    jitter: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe(
        'Share of each retry delay taken off at random, 0..1 (0: exactly the backoff; 1: anywhere between 0 and it), so many clients failing together do not retry in step.',
      ),
  };
}
