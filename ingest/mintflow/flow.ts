/**
 * One mint flow's steps as a state machine. Each poll advances the flow from its
 * current step, observing each step from its own source, and publishes an
 * observation whenever a step's status, fields or error change (the latest
 * observation carries every field of the step). Rules:
 * - a step waiting longer than its limit (from when it became current) is `failed`;
 * - a source that is down leaves the step `in_progress` with the error noted;
 * - a failed relay (HookFailed) skips composer/oft/solanaMint and awaits the reclaim;
 * - the flow ends when the Solana mint or the reclaim completes, or a step fails for good.
 */
import { errorMessage } from '../../core/errors.ts';
import type { MINT_STEPS } from '../../schemas/families.ts';
import type { Burn } from './burn.ts';
import type { MintFlowSources, RelayOutcome } from './sources.ts';

export type Step = (typeof MINT_STEPS)[number];
export type StepStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'skipped';

export interface Observation {
  status: StepStatus;
  fields: Record<string, string>;
  error: string;
}

export interface StepState extends Observation {
  /** When the step became the one awaited (ms). */
  since: number;
}

/** A tracked flow; plain JSON so the tracker's checkpoint can hold it. */
export interface Flow {
  burn: Burn;
  steps: Partial<Record<Step, StepState>>;
  nonce?: string;
  relay?: RelayOutcome;
  done: boolean;
  lastObservedAt: number;
}

export interface FlowContext {
  sources: MintFlowSources;
  clock: () => number;
  limits: Record<Exclude<Step, 'solana'>, number>;
  settings: {
    sourceDomain: number;
    primaryChainId: number;
    relayerAddress: string;
    solanaOftProgramId: string;
  };
  oftStoreOf: (vault: string) => string;
  /** Publishes one observation (awaited before the flow moves on). */
  emit: (flow: Flow, step: Step, obs: Observation, observedAt: number) => Promise<void>;
  /** Reports a source failure (source_errors). */
  sourceDown: (flow: Flow, step: Step, err: unknown) => Promise<void>;
}

const FORWARD: Step[] = ['solana', 'cctpAttestation', 'predicate', 'relay', 'composer', 'oft', 'solanaMint'];
const AFTER_RELAY: Step[] = ['composer', 'oft', 'solanaMint'];
const seconds = (ms: number) => String(Math.floor(ms / 1000));
const waiting = (fields: Record<string, string> = {}): Observation => ({
  status: 'in_progress',
  fields,
  error: '',
});
const done = (fields: Record<string, string>): Observation => ({ status: 'completed', fields, error: '' });

/** The step the flow waits for, or undefined when none is left. */
export function currentStep(flow: Flow): Step | undefined {
  const settled = (s: Step) => ['completed', 'skipped'].includes(flow.steps[s]?.status ?? '');
  if (flow.steps.relay?.status === 'failed') return settled('reclaim') ? undefined : 'reclaim';
  return FORWARD.find((s) => !settled(s));
}

type Observer = (flow: Flow, ctx: FlowContext) => Promise<Observation>;

const OBSERVERS: Record<Exclude<Step, 'solana'>, Observer> = {
  async cctpAttestation(flow, ctx) {
    const a = await ctx.sources.attestation.byTransaction(ctx.settings.sourceDomain, flow.burn.signature);
    if (a.status === 'not_found') return waiting();
    const fields = {
      nonce: a.nonce,
      attestationServiceStatus: a.status,
      sourceDomain: String(a.sourceDomain),
      destinationDomain: String(a.destinationDomain),
    };
    if (a.status !== 'complete') return waiting(fields);
    flow.nonce = a.nonce;
    return done({ ...fields, attestedAt: seconds(ctx.clock()) });
  },
  async predicate(flow, ctx) {
    const r = await ctx.sources.compliance.check({
      from: flow.burn.wallet,
      to: ctx.settings.relayerAddress,
      chainId: ctx.settings.primaryChainId,
    });
    const fields = { taskId: r.taskId, isCompliant: String(r.compliant), checkedAt: seconds(ctx.clock()) };
    return r.compliant ? done(fields) : { status: 'failed', fields, error: 'the depositor is not compliant' };
  },
  async relay(flow, ctx) {
    const r = await ctx.sources.primary.relay(flow.nonce ?? '');
    if (!r) return waiting();
    flow.relay = r;
    const fields = {
      txHash: r.txHash,
      blockNumber: r.blockNumber,
      blockTimestamp: String(r.blockTimestamp),
      gasUsed: r.gasUsed,
    };
    return r.kind === 'relayed'
      ? done(fields)
      : { status: 'failed', fields, error: 'HookFailed: the composer hook reverted on the primary chain' };
  },
  async composer(flow) {
    const d = flow.relay?.deposited;
    return d ? done({ assetAmount: d.assetAmount, shareAmount: d.shareAmount }) : waiting();
  },
  async oft(flow) {
    const s = flow.relay?.oftSent;
    if (!s) return waiting();
    return done({
      lzGuid: s.guid,
      dstEid: String(s.dstEid),
      amountSent: s.amountSent,
      amountReceived: s.amountReceived,
    });
  },
  async solanaMint(flow, ctx) {
    const guid = flow.relay?.oftSent?.guid ?? '';
    const m = await ctx.sources.scan.byGuid(guid);
    if (!m) return waiting();
    const fields = { lzGuid: guid, scanStatus: m.status };
    if (['FAILED', 'BLOCKED', 'UNRESOLVABLE_COMMAND', 'MALFORMED_COMMAND'].includes(m.status))
      return { status: 'failed', fields, error: `LayerZero ${m.status}: ${m.message}` };
    if (m.status !== 'DELIVERED' || !m.dstTxHash) return waiting(fields);
    const tx = await ctx.sources.solana.getTransaction(m.dstTxHash);
    if (!tx) return waiting(fields);
    return done({
      ...fields,
      signature: m.dstTxHash,
      blockTimestamp: String(tx.blockTime ?? 0),
      blockSlot: String(tx.slot),
      programId: ctx.settings.solanaOftProgramId,
      oftstoreAddress: ctx.oftStoreOf(flow.burn.vault),
    });
  },
  async reclaim(flow, ctx) {
    const r = await ctx.sources.primary.refund(flow.nonce ?? '');
    return r ? done({ txHash: r.txHash, blockTimestamp: String(r.blockTimestamp) }) : waiting();
  },
};

/** Publishes `obs` for `step` when it differs from what was last published. */
async function record(
  flow: Flow,
  step: Step,
  obs: Observation,
  ctx: FlowContext,
  since?: number,
): Promise<void> {
  const prev = flow.steps[step];
  const same =
    prev &&
    prev.status === obs.status &&
    prev.error === obs.error &&
    JSON.stringify(prev.fields) === JSON.stringify(obs.fields);
  if (same) return;
  // Strictly increasing per flow: the view keeps the latest observation per step by time.
  const at = Math.max(ctx.clock(), flow.lastObservedAt + 1);
  await ctx.emit(flow, step, obs, at);
  flow.lastObservedAt = at;
  flow.steps[step] = { ...obs, since: prev?.since ?? since ?? at };
}

/** The first observations of a new flow: the burn (completed) and the attestation awaited. */
export async function open(flow: Flow, ctx: FlowContext, indexedAt: number): Promise<void> {
  const b = flow.burn;
  await record(
    flow,
    'solana',
    done({
      blockTimestamp: String(b.blockTime),
      blockSlot: String(b.slot),
      indexedAt: seconds(indexedAt),
      composerAddress: b.composer,
      wallet: b.wallet,
      amount: b.amount,
      vault: b.vault,
    }),
    ctx,
  );
  await record(flow, 'cctpAttestation', waiting(), ctx);
}

/** Advances the flow as far as its sources allow this poll. */
export async function advance(flow: Flow, ctx: FlowContext): Promise<void> {
  for (let step = currentStep(flow); step && step !== 'solana'; step = currentStep(flow)) {
    const prev = flow.steps[step];
    const since = prev?.since ?? ctx.clock();
    let obs: Observation;
    try {
      obs = await OBSERVERS[step](flow, ctx);
    } catch (e) {
      await ctx.sourceDown(flow, step, e);
      obs = {
        status: 'in_progress',
        fields: prev?.fields ?? {},
        error: `source unavailable: ${errorMessage(e)}`,
      };
    }
    const limit = ctx.limits[step];
    if ((obs.status === 'in_progress' || obs.status === 'pending') && ctx.clock() - since > limit)
      obs = {
        status: 'failed',
        fields: obs.fields,
        error: `no ${step} within ${Math.round(limit / 1000)} s`,
      };
    await record(flow, step, obs, ctx, since);
    if (obs.status === 'failed' && step === 'relay') {
      for (const s of AFTER_RELAY) await record(flow, s, { status: 'skipped', fields: {}, error: '' }, ctx);
      continue;
    }
    if (obs.status === 'failed') {
      flow.done = true;
      return;
    }
    if (obs.status !== 'completed') return;
  }
  flow.done = currentStep(flow) === undefined;
}
