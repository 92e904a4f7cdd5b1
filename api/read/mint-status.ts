/**
 * Builds the spec's MintStatus from the `mint_state` rows of one flow
 * (docs/architecture.md#endpoint-semantics, Mint status). Each step's fields are typed by the response schema
 * itself (`mintStatus` in api/http/responses.ts): numbers and booleans are parsed
 * from the stored strings, every `<x>Formatted` is `<x>` (Unix seconds) as ISO 8601
 * UTC, so the stored field names and the response stay one contract.
 */
import type { z } from 'zod';
import type { Config } from '../../core/config.ts';
import { MINT_STEPS, STEP_STATUSES } from '../../schemas/families.ts';
import { mintStatus } from '../http/responses.ts';
import type { MintStepState } from './mint-state.ts';

export type MintStatus = z.infer<typeof mintStatus>;
type Steps = MintStatus['steps'];
type StepName = keyof Steps;

/** The steps in the order of the interface, and their statuses in `statusCode` order (the event contract's lists). */
export const STEP_ORDER = MINT_STEPS satisfies readonly StepName[];
export { STEP_STATUSES };
export const OVERALL_STATUSES = ['pending', 'processing', 'completed', 'failed', 'refunded'] as const;

/** ISO 8601 UTC of Unix seconds; '' for 0 (not known yet). */
export function isoSeconds(seconds: number): string {
  return seconds > 0 ? new Date(seconds * 1000).toISOString() : '';
}

/** `<base>/tx/<hash>`, or the template with `{hash}` replaced; '' when either is missing. */
export function explorerLink(base: string, hash: string): string {
  if (!base || !hash) return '';
  return base.includes('{hash}') ? base.replaceAll('{hash}', hash) : `${base.replace(/\/+$/, '')}/tx/${hash}`;
}

const stepShapes = mintStatus.shape.steps.shape;

/** One step of the response: status, code, and its schema's fields from the stored strings. */
function buildStep(name: StepName, state: MintStepState | undefined): Record<string, unknown> {
  const status = (STEP_STATUSES as readonly string[]).includes(state?.status ?? '')
    ? (state?.status as string)
    : 'pending';
  const out: Record<string, unknown> = { status, statusCode: STEP_STATUSES.indexOf(status as never) };
  const fields = state?.fields ?? {};
  for (const [key, schema] of Object.entries(stepShapes[name].shape)) {
    if (key === 'status' || key === 'statusCode') continue;
    const type = (schema as z.ZodType).def.type;
    if (key === 'error') {
      if (state?.error) out.error = state.error;
    } else if (key.endsWith('Formatted')) {
      out[key] = isoSeconds(Number(fields[key.slice(0, -'Formatted'.length)] ?? 0));
    } else if (type === 'number') {
      const n = Number(fields[key] ?? 0);
      out[key] = Number.isFinite(n) ? n : 0;
    } else if (type === 'boolean') {
      out[key] = fields[key] === 'true';
    } else out[key] = fields[key] ?? '';
  }
  return out;
}

/** `overallStatus`: refunded once the reclaim completed; failed on any failed step; completed when every applicable step is. */
function overall(steps: Record<StepName, { status: string }>, applicable: StepName[]): string {
  if (steps.reclaim.status === 'completed') return 'refunded';
  if (STEP_ORDER.some((s) => steps[s].status === 'failed')) return 'failed';
  if (applicable.every((s) => steps[s].status === 'completed')) return 'completed';
  if (STEP_ORDER.every((s) => steps[s].status === 'pending')) return 'pending';
  return 'processing';
}

const upperSnake = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();

/**
 * The flow's error: the first failed step's (`<STEP>_FAILED`), else the first step
 * whose source is failing while it waits (`<STEP>_DELAYED`); empty strings when none.
 */
function flowError(states: Map<string, MintStepState>, steps: Record<StepName, { status: string }>) {
  const failed = STEP_ORDER.find((s) => steps[s].status === 'failed');
  if (failed)
    return { code: `${upperSnake(failed)}_FAILED`, message: states.get(failed)?.error || `${failed} failed` };
  const delayed = STEP_ORDER.find((s) => steps[s].status !== 'completed' && states.get(s)?.error);
  if (delayed) return { code: `${upperSnake(delayed)}_DELAYED`, message: states.get(delayed)?.error ?? '' };
  return { code: '', message: '' };
}

/** The MintStatus of `signature` from its `mint_state` rows (at least one). */
export function buildMintStatus(signature: string, rows: MintStepState[], config: Config): MintStatus {
  const states = new Map(rows.map((r) => [r.step, r]));
  const steps = Object.fromEntries(
    STEP_ORDER.map((s) => [s, buildStep(s, states.get(s))]),
  ) as unknown as Steps;
  // Skipped steps do not apply; the reclaim applies only once a refund is under way.
  const applicable = STEP_ORDER.filter(
    (s) => steps[s].status !== 'skipped' && (s !== 'reclaim' || steps.reclaim.status !== 'pending'),
  );
  const done = applicable.filter((s) => steps[s].status === 'completed').length;
  const overallStatus = overall(steps, applicable);
  const solanaFields = states.get('solana')?.fields ?? {};
  const createdAt = Math.floor(Math.min(...rows.map((r) => r.firstSeen)) / 1000);
  const updatedAt = Math.floor(Math.max(...rows.map((r) => r.lastSeen)) / 1000);
  const primary = config.chains.find((c) => c.chainId === config.mintFlow.primaryChainId);
  const relayTx = steps.relay.txHash;
  // `createdAt`/`updatedAt` come from the schema's computed `at()` keys, which the inferred type does not name.
  const status = {
    solanaSignature: signature,
    solanaWallet: solanaFields.wallet ?? '',
    amount: solanaFields.amount ?? '',
    progress: `${done}/${applicable.length}`,
    overallStatus,
    overallStatusCode: OVERALL_STATUSES.indexOf(overallStatus as never),
    createdAt,
    createdAtFormatted: isoSeconds(createdAt),
    updatedAt,
    updatedAtFormatted: isoSeconds(updatedAt),
    steps,
    error: flowError(states, steps),
    links: {
      solanaExplorer: explorerLink(config.solana.explorerUrl, signature),
      primaryExplorer: explorerLink(primary?.explorerUrl ?? '', relayTx),
      crossChainScan: explorerLink(config.mintFlow.crossChainScanExplorerUrl, relayTx),
      solanaMintTransaction: explorerLink(config.solana.explorerUrl, steps.solanaMint.signature),
    },
  };
  return status as MintStatus;
}
