/**
 * GET /v1/solana/mint-status/{signature} over the real pipeline: `mint_steps`
 * observations published on the in-process bus, stored by the consumers in chDB,
 * read back through the `mint_state` view by the handler. Each scenario checks the
 * answer after every observation against what the observations say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseBodies } from '../../api/http/responses.ts';
import { type Publish, publisher } from '../../ingest/solana/publish.ts';
import type { MintStepRecord } from '../../schemas/records.ts';
import { signature } from '../fixtures/solana/keys.ts';
import { COMPOSER, solanaVault } from '../fixtures/solana/vaults.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';

const T0 = 1_760_000_000_000; // ms
const RELAY_TX = `0x${'ab'.repeat(32)}`;
const GUID = `0x${'cd'.repeat(32)}`;
const schema = responseBodies['GET /solana/mint-status/{signature}'];
let p: Pipeline;
let publish: Publish;

const iso = (s: number) => new Date(s * 1000).toISOString();

async function observe(sig: string, obs: Omit<MintStepRecord, 'signature'>[]) {
  await publish(
    'mint_steps',
    obs.map((o) => ({ signature: sig, ...o })),
  );
  await p.drained();
  const res = await p.get(`/v1/solana/mint-status/${sig}`);
  expect(res.status).toBe(200);
  return schema.parse(res.body).data as any;
}

const statuses = (d: any) =>
  Object.fromEntries(Object.entries(d.steps).map(([k, v]: [string, any]) => [k, v.status]));

beforeAll(async () => {
  p = await startPipeline({
    config: {
      vaults: [solanaVault()],
      chains: [{ chainId: 98866, name: 'primary', explorerUrl: 'https://explorer.plume.org' }],
      solana: { explorerUrl: 'https://solscan.io' },
      mintFlow: { crossChainScanExplorerUrl: 'https://layerzeroscan.com' },
    },
  });
  publish = publisher(p.bus, p.codec, p.config.topicPrefix);
}, 60_000);
afterAll(async () => p?.close());

describe('mint status from mint_steps observations', () => {
  it('follows a flow from the burn to the Solana mint: completed, 7/7, every field and link', async () => {
    const sig = signature('happy');
    const burnAt = T0 / 1000 - 30;
    let d = await observe(sig, [
      {
        step: 'solana',
        status: 'completed',
        observedAt: T0,
        fields: {
          blockTimestamp: String(burnAt),
          blockSlot: '364000001',
          indexedAt: String(T0 / 1000),
          composerAddress: COMPOSER,
          wallet: 'Wa11et1111111111111111111111111111111111111',
          amount: '2500000',
        },
        error: '',
      },
      { step: 'cctpAttestation', status: 'in_progress', observedAt: T0 + 1, fields: {}, error: '' },
    ]);
    expect(d.overallStatus).toBe('processing');
    expect(d.overallStatusCode).toBe(1);
    expect(d.progress).toBe('1/7');
    expect(d.steps.solana).toEqual({
      status: 'completed',
      statusCode: 2,
      blockTimestamp: burnAt,
      blockTimestampFormatted: iso(burnAt),
      blockSlot: '364000001',
      indexedAt: T0 / 1000,
      indexedAtFormatted: iso(T0 / 1000),
      composerAddress: COMPOSER,
    });
    expect(d.steps.cctpAttestation.statusCode).toBe(1);
    expect(d.solanaWallet).toBe('Wa11et1111111111111111111111111111111111111');
    expect(d.amount).toBe('2500000');
    expect(d.links.solanaExplorer).toBe(`https://solscan.io/tx/${sig}`);
    expect(d.links.primaryExplorer).toBe('');

    const attestedAt = T0 / 1000 + 60;
    d = await observe(sig, [
      {
        step: 'cctpAttestation',
        status: 'completed',
        observedAt: T0 + 60_000,
        fields: {
          nonce: `0x${'11'.repeat(32)}`,
          attestedAt: String(attestedAt),
          attestationServiceStatus: 'complete',
          sourceDomain: '5',
          destinationDomain: '22',
        },
        error: '',
      },
      {
        step: 'predicate',
        status: 'completed',
        observedAt: T0 + 61_000,
        fields: { taskId: 'task-1', isCompliant: 'true', checkedAt: String(attestedAt + 1) },
        error: '',
      },
      {
        step: 'relay',
        status: 'completed',
        observedAt: T0 + 70_000,
        fields: {
          txHash: RELAY_TX,
          blockNumber: '1201',
          blockTimestamp: String(attestedAt + 10),
          gasUsed: '412345',
        },
        error: '',
      },
      {
        step: 'composer',
        status: 'completed',
        observedAt: T0 + 70_001,
        fields: { assetAmount: '2500000', shareAmount: '2380952' },
        error: '',
      },
      {
        step: 'oft',
        status: 'completed',
        observedAt: T0 + 70_002,
        fields: { lzGuid: GUID, dstEid: '30168', amountSent: '2380952', amountReceived: '2380000' },
        error: '',
      },
    ]);
    expect(d.progress).toBe('6/7');
    expect(d.overallStatus).toBe('processing');
    expect(d.steps.cctpAttestation).toMatchObject({
      sourceDomain: 5,
      destinationDomain: 22,
      attestedAtFormatted: iso(attestedAt),
    });
    expect(d.steps.predicate).toMatchObject({ isCompliant: true, taskId: 'task-1' });
    expect(d.steps.predicate).not.toHaveProperty('error');
    expect(d.steps.oft).toMatchObject({ dstEid: 30168, amountSent: '2380952', amountReceived: '2380000' });
    expect(d.links.primaryExplorer).toBe(`https://explorer.plume.org/tx/${RELAY_TX}`);
    expect(d.links.crossChainScan).toBe(`https://layerzeroscan.com/tx/${RELAY_TX}`);

    const mintSig = signature('happy-mint');
    d = await observe(sig, [
      {
        step: 'solanaMint',
        status: 'completed',
        observedAt: T0 + 120_000,
        fields: { signature: mintSig, blockTimestamp: String(attestedAt + 50), blockSlot: '364000400' },
        error: '',
      },
    ]);
    expect(statuses(d)).toEqual({
      solana: 'completed',
      cctpAttestation: 'completed',
      predicate: 'completed',
      relay: 'completed',
      composer: 'completed',
      oft: 'completed',
      solanaMint: 'completed',
      reclaim: 'pending',
    });
    expect(d.overallStatus).toBe('completed');
    expect(d.overallStatusCode).toBe(2);
    expect(d.progress).toBe('7/7');
    expect(d.error).toEqual({ code: '', message: '' });
    expect(d.createdAt).toBe(Math.floor(T0 / 1000));
    expect(d.updatedAt).toBe(Math.floor((T0 + 120_000) / 1000));
    expect(d.updatedAtFormatted).toBe(iso(Math.floor((T0 + 120_000) / 1000)));
    expect(d.links.solanaMintTransaction).toBe(`https://solscan.io/tx/${mintSig}`);
  }, 60_000);

  it('a rejected compliance check fails the flow with the step error', async () => {
    const sig = signature('rejected');
    const d = await observe(sig, [
      { step: 'solana', status: 'completed', observedAt: T0, fields: {}, error: '' },
      { step: 'cctpAttestation', status: 'completed', observedAt: T0 + 1, fields: {}, error: '' },
      {
        step: 'predicate',
        status: 'failed',
        observedAt: T0 + 2,
        fields: { taskId: 'task-9', isCompliant: 'false', checkedAt: String(T0 / 1000) },
        error: 'wallet is not compliant',
      },
    ]);
    expect(d.overallStatus).toBe('failed');
    expect(d.overallStatusCode).toBe(3);
    expect(d.progress).toBe('2/7');
    expect(d.steps.predicate).toMatchObject({
      status: 'failed',
      statusCode: 3,
      isCompliant: false,
      error: 'wallet is not compliant',
    });
    expect(d.error).toEqual({ code: 'PREDICATE_FAILED', message: 'wallet is not compliant' });
  }, 60_000);

  it('a failed hook then a refund is refunded, with the reclaim counted and skipped steps not', async () => {
    const sig = signature('refund');
    let d = await observe(sig, [
      { step: 'solana', status: 'completed', observedAt: T0, fields: {}, error: '' },
      { step: 'cctpAttestation', status: 'completed', observedAt: T0 + 1, fields: {}, error: '' },
      { step: 'predicate', status: 'completed', observedAt: T0 + 2, fields: {}, error: '' },
      {
        step: 'relay',
        status: 'failed',
        observedAt: T0 + 3,
        fields: { txHash: RELAY_TX },
        error: 'HookFailed',
      },
    ]);
    expect(d.overallStatus).toBe('failed');
    d = await observe(sig, [
      { step: 'composer', status: 'skipped', observedAt: T0 + 4, fields: {}, error: '' },
      { step: 'oft', status: 'skipped', observedAt: T0 + 4, fields: {}, error: '' },
      { step: 'solanaMint', status: 'skipped', observedAt: T0 + 4, fields: {}, error: '' },
      {
        step: 'reclaim',
        status: 'completed',
        observedAt: T0 + 5,
        fields: { txHash: `0x${'ef'.repeat(32)}`, blockTimestamp: String(T0 / 1000 + 5) },
        error: '',
      },
    ]);
    expect(d.overallStatus).toBe('refunded');
    expect(d.overallStatusCode).toBe(4);
    // solana, cctpAttestation, predicate, reclaim completed of those five applicable (relay failed).
    expect(d.progress).toBe('4/5');
    expect(d.steps.reclaim).toMatchObject({
      status: 'completed',
      statusCode: 2,
      txHash: `0x${'ef'.repeat(32)}`,
    });
    expect(d.steps.composer.statusCode).toBe(4);
    expect(d.error).toEqual({ code: 'RELAY_FAILED', message: 'HookFailed' });
  }, 60_000);

  it('a step whose source is down stays in progress with the error noted', async () => {
    const sig = signature('delayed');
    const d = await observe(sig, [
      { step: 'solana', status: 'completed', observedAt: T0, fields: {}, error: '' },
      {
        step: 'cctpAttestation',
        status: 'in_progress',
        observedAt: T0 + 1,
        fields: {},
        error: 'attestation service: HTTP 503',
      },
    ]);
    expect(d.overallStatus).toBe('processing');
    expect(d.error).toEqual({ code: 'CCTP_ATTESTATION_DELAYED', message: 'attestation service: HTTP 503' });
  }, 60_000);

  it('404 for a signature that is no flow (no tracker to ask), 400 naming a malformed one', async () => {
    const unknown = await p.get(`/v1/solana/mint-status/${signature('never-seen')}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    const bad = await p.get('/v1/solana/mint-status/not-a-signature0OIl');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('BAD_PARAMETER');
    expect(bad.body.details[0]).toMatchObject({ in: 'path', path: 'signature' });
  });
});
