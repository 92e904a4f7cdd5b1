/**
 * The mint-flow tracker end to end: Solana burns on the JSON-RPC stand-in, the
 * attestation, compliance and LayerZero scan stand-ins answering in the services'
 * published shapes, the relayer / composer / share OFT events emitted on a real
 * anvil, observations through the in-process bus and the consumers into chDB, and
 * GET /v1/solana/mint-status/{signature} over the `mint_state` view. Each scenario
 * checks the stored status sequence of every step and the final response body.
 */
import { getBase58Encoder } from '@solana/web3.js';
import { type Hex, parseEventLogs, type TransactionReceipt } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { responseBodies } from '../../api/http/responses.ts';
import { silentLogger } from '../../core/log.ts';
import { composerAbi, shareOftAbi } from '../../devnet/abis.ts';
import { type MintFlowTracker, startMintFlowTracker } from '../../ingest/mintflow/tracker.ts';
import { burnInstructionData, TOKEN_MESSENGER_MINTER_V2, USDC_MINT } from '../fixtures/solana/burn.ts';
import { address, signature } from '../fixtures/solana/keys.ts';
import { MINT, OFT_STORE, solanaVault } from '../fixtures/solana/vaults.ts';
import { type PrimaryChain, startPrimaryChain } from '../support/primary-chain.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';
import type { Standin } from '../support/standins/server.ts';
import { startIris, startPredicate, startScan } from '../support/standins/services.ts';
import { SolanaLedger, startSolanaRpc } from '../support/standins/solana-rpc.ts';

const PRIMARY = 98866;
const OFT_PROGRAM = 'ChEfPd3RzLeYiRwp1K9evimmaFSd6DV1S4Mv5q5Aj1th';
const SOLANA_MINT_LIMIT_MS = 600_000;
const schema = responseBodies['GET /solana/mint-status/{signature}'];
const ledger = new SolanaLedger();
let offset = 0; // the tracker's clock runs ahead of real time by this much
const clock = () => Date.now() + offset;
let chain: PrimaryChain;
let rpc: Standin;
let iris: Awaited<ReturnType<typeof startIris>>;
let predicate: Awaited<ReturnType<typeof startPredicate>>;
let scan: Awaited<ReturnType<typeof startScan>>;
let p: Pipeline;
let tracker: MintFlowTracker;
let oldBurn: string;
let oldBurnSlot: number;
let foreignBurn: string;
let plainTx: string;

const bytes32 = (base58: string): Hex =>
  `0x${Buffer.from(getBase58Encoder().encode(base58) as Uint8Array).toString('hex')}`;
const nonceOf = (label: string): Hex => `0x${Buffer.from(label.padEnd(32, '.')).toString('hex')}`;

/** Funds `wallet` with USDC, then burns `amount` of it with a hook to `composer`; returns the burn's signature. */
function burn(label: string, wallet: string, amount: bigint, composer = chain.addresses.composer): string {
  ledger.transact(signature(`${label}-fund`), USDC_MINT, [{ owner: wallet, delta: amount }]);
  const data = burnInstructionData({
    amount,
    destinationDomain: 22,
    mintRecipient: chain.addresses.relayer,
    composer,
  });
  return ledger.transact(signature(label), USDC_MINT, [{ owner: wallet, delta: -amount }], {
    extraKeys: [TOKEN_MESSENGER_MINTER_V2],
    instructions: [{ programId: TOKEN_MESSENGER_MINTER_V2, accounts: [wallet], data }],
    logMessages: [
      `Program ${TOKEN_MESSENGER_MINTER_V2} invoke [1]`,
      'Program log: Instruction: DepositForBurnWithHook',
      `Program ${TOKEN_MESSENGER_MINTER_V2} success`,
    ],
  }).signature;
}

async function status(sig: string) {
  const res = await p.get(`/v1/solana/mint-status/${sig}`);
  return res.status === 200 ? (schema.parse(res.body).data as any) : undefined;
}

function waitStatus(sig: string, what: string, pred: (d: any) => boolean) {
  return vi.waitFor(
    async () => {
      const d = await status(sig);
      if (!d || !pred(d)) throw new Error(`waiting for ${what}; the flow now: ${JSON.stringify(d)}`);
      return d;
    },
    { timeout: 30_000 },
  );
}

/** The stored observations of `sig`: per step, its statuses in order (repeats collapsed). */
async function sequences(sig: string): Promise<Record<string, string[]>> {
  await p.drained();
  const rows = await p.store.query<{ step: string; status: string }>(
    `SELECT step, status FROM ${p.store.database}.mint_steps_raw FINAL WHERE signature = {sig:String}
     ORDER BY observed_at`,
    { sig },
  );
  const out: Record<string, string[]> = {};
  for (const r of rows) {
    const list = out[r.step] ?? [];
    if (list[list.length - 1] !== r.status) list.push(r.status);
    out[r.step] = list;
  }
  return out;
}

/** The composer's Deposited and the OFT's OFTSent of a relay receipt, decoded with the devnet ABIs. */
function delivery(receipt: TransactionReceipt) {
  const logs = parseEventLogs({ abi: [...composerAbi, ...shareOftAbi], logs: receipt.logs });
  const deposited = logs.find((l) => l.eventName === 'Deposited')?.args as {
    assetAmt: bigint;
    shareAmt: bigint;
  };
  const sent = logs.find((l) => l.eventName === 'OFTSent')?.args as {
    guid: Hex;
    dstEid: number;
    amountSentLD: bigint;
    amountReceivedLD: bigint;
  };
  return { deposited, sent };
}

const complete = (nonce: string) =>
  ({ status: 'complete', nonce, sourceDomain: 5, destinationDomain: 22 }) as const;

beforeAll(async () => {
  chain = await startPrimaryChain(PRIMARY);
  [rpc, iris, predicate, scan] = await Promise.all([
    startSolanaRpc(ledger),
    startIris(),
    startPredicate(),
    startScan(),
  ]);
  // Before the tracker starts: a flow only an on-demand lookup finds, a burn to a
  // composer of no vault, and a share transfer.
  oldBurn = burn('old-burn', address('wallet-old'), 1_000_000n);
  oldBurnSlot = ledger.slot;
  foreignBurn = burn(
    'foreign-burn',
    address('wallet-foreign'),
    5n,
    '0x000000000000000000000000000000000000f00d',
  );
  plainTx = ledger.transact(signature('plain'), MINT, [{ owner: address('holder'), delta: 5n }]).signature;
  p = await startPipeline({
    config: {
      vaults: [{ ...solanaVault(chain.addresses.composer), coreShareOftAddress: chain.addresses.oft }],
      chains: [
        {
          chainId: PRIMARY,
          name: 'primary',
          rpcUrls: [chain.rpcUrl],
          confirmations: 0,
          explorerUrl: 'https://explorer.plume.org',
        },
      ],
      solana: { rpcUrls: [rpc.url], explorerUrl: 'https://solscan.io', backoffMs: 10, maxAttempts: 2 },
      mintFlow: {
        attestationUrl: iris.url,
        complianceUrl: predicate.url,
        crossChainScanUrl: `${scan.url}/v1`,
        relayerAddress: chain.addresses.relayer,
        pollIntervalMs: 100,
        lookupWaitMs: 15_000,
        stepTimeoutsMs: { solanaMint: SOLANA_MINT_LIMIT_MS },
      },
    },
    mintFlow: { lookup: (s) => tracker.lookup(s) },
  });
  tracker = startMintFlowTracker({ config: p.config, bus: p.bus, codec: p.codec, log: silentLogger, clock });
  // Discovery starts from the newest burn: wait for its first answer before burning more.
  const listed = () =>
    rpc.requests.filter((r) => (r.body as { method?: string }).method === 'getSignaturesForAddress').length;
  await vi.waitFor(() => expect(listed(), 'the first discovery poll').toBeGreaterThanOrEqual(2), {
    timeout: 30_000,
  });
}, 120_000);

afterAll(async () => {
  await tracker?.stop();
  await p?.close();
  await Promise.all([rpc, iris, predicate, scan].map((s) => s?.close()));
  await chain?.stop();
});

describe('mint-flow tracker', () => {
  it('looks an unknown signature up on demand, and answers 404 for no flow and 400 for a malformed one', async () => {
    const d = await status(oldBurn);
    expect(d).toBeDefined();
    expect(d.steps.solana).toMatchObject({
      status: 'completed',
      statusCode: 2,
      composerAddress: chain.addresses.composer.toLowerCase(),
    });
    expect(d.steps.solana).toMatchObject({
      blockSlot: String(oldBurnSlot),
      blockTimestamp: ledger.timeOf(oldBurnSlot),
    });
    expect(d.solanaWallet).toBe(address('wallet-old'));
    expect(d.amount).toBe('1000000');
    expect(d.steps.cctpAttestation.status).toBe('in_progress');
    expect(d.overallStatus).toBe('processing');
    expect(d.progress).toBe('1/7');
    expect(tracker.open()).toContain(oldBurn);

    for (const sig of [plainTx, foreignBurn, signature('never-sent')]) {
      const res = await p.get(`/v1/solana/mint-status/${sig}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    // Solana down during the lookup: 503, not a 404 that would say "no flow".
    const down = signature('lookup-while-down');
    rpc.failNext({ status: 503 }, 2, (r) => (r.body as { params?: unknown[] }).params?.[0] === down);
    const outage = await p.get(`/v1/solana/mint-status/${down}`);
    expect(outage.status).toBe(503);
    expect(outage.body.code).toBe('UPSTREAM_UNAVAILABLE');
    const bad = await p.get('/v1/solana/mint-status/0OIl-not-base58');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ in: 'path', path: 'signature' });
  }, 60_000);

  it('happy path: source down, attestation pending then complete, relay, OFT delivery, completed', async () => {
    const wallet = address('wallet-happy');
    const nonce = nonceOf('happy');
    const sig = signature('happy');
    iris.failNext({ status: 503 }, 10_000, (r) => r.query.get('transactionHash') === sig);
    burn('happy', wallet, 2_500_000n);
    let d = await waitStatus(
      sig,
      'the attestation source error',
      (x) => x.error.code === 'CCTP_ATTESTATION_DELAYED',
    );
    expect(d.steps.cctpAttestation.status).toBe('in_progress');
    expect(d.overallStatus).toBe('processing');
    iris.clearFaults();
    iris.messages.set(sig, { ...complete(nonce), status: 'pending_confirmations' });
    d = await waitStatus(
      sig,
      'pending confirmations',
      (x) => x.steps.cctpAttestation.attestationServiceStatus === 'pending_confirmations',
    );
    expect(d.error).toEqual({ code: '', message: '' });
    iris.messages.set(sig, complete(nonce));
    d = await waitStatus(sig, 'the relay awaited', (x) => x.steps.relay.status === 'in_progress');
    expect(d.steps.predicate).toMatchObject({ status: 'completed', isCompliant: true });
    expect(d.progress).toBe('3/7');

    const relayTx = await chain.relay(nonce, 2_500_000n, 30168, bytes32(wallet), false);
    const receipt = await chain.client.getTransactionReceipt({ hash: relayTx });
    const block = await chain.client.getBlock({ blockNumber: receipt.blockNumber });
    const { deposited, sent } = delivery(receipt);
    expect(deposited.assetAmt).toBe(2_500_000n); // the burnt USDC went into the vault
    const guid = sent.guid;
    await waitStatus(sig, 'the OFT delivery awaited', (x) => x.steps.solanaMint.status === 'in_progress');
    scan.messages.set(guid, { status: 'INFLIGHT', dstTxHash: '' });
    const mintTx = ledger.transact(
      signature('happy-mint'),
      MINT,
      [{ owner: wallet, delta: sent.amountReceivedLD }],
      {
        extraKeys: [OFT_PROGRAM],
      },
    );
    scan.messages.set(guid, { status: 'DELIVERED', dstTxHash: mintTx.signature });
    d = await waitStatus(sig, 'completion', (x) => x.overallStatus === 'completed');

    const iso = (s: number) => new Date(s * 1000).toISOString();
    expect(d.steps).toMatchObject({
      cctpAttestation: {
        status: 'completed',
        nonce,
        attestationServiceStatus: 'complete',
        sourceDomain: 5,
        destinationDomain: 22,
      },
      relay: {
        status: 'completed',
        txHash: relayTx,
        blockNumber: receipt.blockNumber.toString(),
        blockTimestamp: Number(block.timestamp),
        blockTimestampFormatted: iso(Number(block.timestamp)),
        gasUsed: receipt.gasUsed.toString(),
      },
      composer: {
        status: 'completed',
        assetAmount: deposited.assetAmt.toString(),
        shareAmount: deposited.shareAmt.toString(),
      },
      oft: {
        status: 'completed',
        lzGuid: guid,
        dstEid: sent.dstEid,
        amountSent: sent.amountSentLD.toString(),
        amountReceived: sent.amountReceivedLD.toString(),
      },
      solanaMint: {
        status: 'completed',
        signature: mintTx.signature,
        blockSlot: String(mintTx.slot),
        blockTimestamp: mintTx.blockTime,
        programId: OFT_PROGRAM,
        oftstoreAddress: OFT_STORE,
      },
      reclaim: { status: 'pending', statusCode: 0 },
    });
    expect(d).toMatchObject({
      overallStatusCode: 2,
      progress: '7/7',
      amount: '2500000',
      solanaWallet: wallet,
    });
    expect(d.links).toEqual({
      solanaExplorer: `https://solscan.io/tx/${sig}`,
      primaryExplorer: `https://explorer.plume.org/tx/${relayTx}`,
      crossChainScan: `https://layerzeroscan.com/tx/${relayTx}`,
      solanaMintTransaction: `https://solscan.io/tx/${mintTx.signature}`,
    });
    expect(await sequences(sig)).toEqual({
      solana: ['completed'],
      cctpAttestation: ['in_progress', 'completed'],
      predicate: ['completed'],
      relay: ['in_progress', 'completed'],
      composer: ['completed'],
      oft: ['completed'],
      solanaMint: ['in_progress', 'completed'],
    });
    expect(tracker.open()).not.toContain(sig);
    // The attestation outage was published as a source error of the vault.
    const errs = await p.store.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM ${p.store.database}.source_errors
       WHERE vault = 'nest-alpha' AND source = 'attestation' AND code = 'HTTP_503'`,
    );
    expect(Number(errs[0].n)).toBeGreaterThan(0);
  }, 90_000);

  it('a rejected compliance check fails the flow and tracking stops', async () => {
    const wallet = address('wallet-rejected');
    const sig = signature('rejected');
    predicate.rejected.add(wallet);
    iris.messages.set(sig, complete(nonceOf('rejected')));
    burn('rejected', wallet, 10n);
    const d = await waitStatus(sig, 'the failure', (x) => x.overallStatus === 'failed');
    expect(d.steps.predicate).toMatchObject({ status: 'failed', statusCode: 3, isCompliant: false });
    expect(d.steps.predicate.taskId).toMatch(/^task-\d+$/);
    expect(d.error).toEqual({ code: 'PREDICATE_FAILED', message: 'the depositor is not compliant' });
    expect(d.progress).toBe('2/7');
    expect(d.overallStatusCode).toBe(3);
    expect(await sequences(sig)).toEqual({
      solana: ['completed'],
      cctpAttestation: ['in_progress', 'completed'],
      predicate: ['failed'],
    });
    await vi.waitFor(() => expect(tracker.open(), 'tracking to stop').not.toContain(sig), {
      timeout: 30_000,
    });
  }, 60_000);

  it('a failed hook and its refund: relay failed, the rest skipped, reclaim completed, refunded', async () => {
    const sig = signature('refund');
    const nonce = nonceOf('refund');
    iris.messages.set(sig, complete(nonce));
    burn('refund', address('wallet-refund'), 77n);
    await waitStatus(sig, 'the relay awaited', (x) => x.steps.relay.status === 'in_progress');
    // A restart: the new tracker resumes the open flows from its checkpoint.
    await tracker.stop();
    tracker = startMintFlowTracker({
      config: p.config,
      bus: p.bus,
      codec: p.codec,
      log: silentLogger,
      clock,
    });
    expect(tracker.open()).toContain(sig);
    // The relayer's forced refund: HookFailed and Refunded in one transaction.
    const refundTx = await chain.relay(nonce, 77n, 30168, bytes32(address('wallet-refund')), true);
    const d = await waitStatus(sig, 'the refund', (x) => x.overallStatus === 'refunded');
    const receipt = await chain.client.getTransactionReceipt({ hash: refundTx });
    const block = await chain.client.getBlock({ blockNumber: receipt.blockNumber });
    expect(d.steps.relay).toMatchObject({ status: 'failed', statusCode: 3, txHash: refundTx });
    expect(d.steps.relay.error).toMatch(/HookFailed/);
    expect(d.steps.reclaim).toMatchObject({
      status: 'completed',
      txHash: refundTx,
      blockTimestamp: Number(block.timestamp),
    });
    expect(d.error).toMatchObject({ code: 'RELAY_FAILED' });
    expect(d).toMatchObject({ overallStatusCode: 4, progress: '4/5' });
    expect(await sequences(sig)).toEqual({
      solana: ['completed'],
      cctpAttestation: ['in_progress', 'completed'],
      predicate: ['completed'],
      relay: ['in_progress', 'failed'],
      composer: ['skipped'],
      oft: ['skipped'],
      solanaMint: ['skipped'],
      reclaim: ['completed'],
    });
    await vi.waitFor(() => expect(tracker.open(), 'tracking to stop').not.toContain(sig), {
      timeout: 30_000,
    });
  }, 60_000);

  it('an OFT delivery delayed past its limit fails the flow', async () => {
    const sig = signature('delayed');
    const nonce = nonceOf('delayed');
    iris.messages.set(sig, complete(nonce));
    burn('delayed', address('wallet-delayed'), 99n);
    await waitStatus(sig, 'the relay awaited', (x) => x.steps.relay.status === 'in_progress');
    const relayTx = await chain.relay(nonce, 99n, 30168, bytes32(address('wallet-delayed')), false);
    const { guid } = delivery(await chain.client.getTransactionReceipt({ hash: relayTx })).sent;
    scan.messages.set(guid, { status: 'INFLIGHT', dstTxHash: '' });
    await waitStatus(sig, 'the delivery awaited', (x) => x.steps.solanaMint.status === 'in_progress');
    offset += SOLANA_MINT_LIMIT_MS + 1000;
    const d = await waitStatus(sig, 'the timeout', (x) => x.overallStatus === 'failed');
    expect(d.steps.solanaMint).toMatchObject({ status: 'failed', statusCode: 3 });
    expect(d.error).toEqual({
      code: 'SOLANA_MINT_FAILED',
      message: `no solanaMint within ${SOLANA_MINT_LIMIT_MS / 1000} s`,
    });
    expect(d.progress).toBe('6/7');
    expect((await sequences(sig)).solanaMint).toEqual(['in_progress', 'failed']);
    await vi.waitFor(() => expect(tracker.open(), 'tracking to stop').not.toContain(sig), {
      timeout: 30_000,
    });
  }, 60_000);
});
