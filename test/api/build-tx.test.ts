/**
 * POST /v1/auto-claim/build-tx against a real anvil node with the devnet's
 * OperatorRegistry deployed: the returned transaction is sent and the registry
 * state read back, so "enable", "disable" and "already in that state" are checked
 * on chain, not only in the response.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  type Hex,
  http,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, listen } from '../../api/server.ts';
import { parseConfig } from '../../core/config.ts';
import { operatorRegistryAbi } from '../../devnet/abis.ts';
import { type AnvilNode, anvilAccount, freePort, startAnvil } from '../../devnet/anvil.ts';
import { type DevnetAddresses, deployVaultSystem } from '../../devnet/deploy.ts';
import { createStore, type Store } from '../../store/client.ts';

/** A funded anvil account that is not the deployer. */
const user = anvilAccount(1);
/** setOperator(address,bool), from the reference. */
const SET_OPERATOR_SELECTOR = '0x558a7297';

let node: AnvilNode;
let addrs: DevnetAddresses;
let store: Store;
let server: Server;
let url: string;
let dir: string;

async function post(body: unknown, contentType = 'application/json') {
  const res = await fetch(`${url}/v1/auto-claim/build-tx`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function isOperator(controller: Address): Promise<boolean> {
  const client = createPublicClient({ transport: http(node.rpcUrl) });
  return client.readContract({
    address: addrs.operatorRegistry,
    abi: operatorRegistryAbi,
    functionName: 'isOperator',
    args: [controller, addrs.redeemOperator],
  });
}

/** Signs and sends a returned transaction descriptor as the user; waits for it. */
async function sendAsUser(tx: { to: Address; data: Hex; value: string }) {
  const transport = http(node.rpcUrl);
  const wallet = createWalletClient({ account: user, transport });
  const hash = await wallet.sendTransaction({
    to: tx.to,
    data: tx.data,
    value: BigInt(tx.value),
    chain: null,
  });
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({
    hash,
    pollingInterval: 50,
  });
  expect(receipt.status).toBe('success');
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 98866 });
  addrs = await deployVaultSystem(node.rpcUrl, { vaults: 1 });
  dir = mkdtempSync(join(tmpdir(), 'vs-buildtx-'));
  const deadRpc = `http://127.0.0.1:${await freePort()}`;
  const config = parseConfig({
    dataDir: join(dir, 'data'),
    chains: [
      {
        chainId: 98866,
        name: 'plume',
        // A dead first URL: every call moves on to the next one (rpc/evm-transport.ts).
        rpcUrls: [deadRpc, node.rpcUrl],
        operatorRegistry: addrs.operatorRegistry,
        redeemOperator: addrs.redeemOperator,
        requestTimeoutMs: 2_000,
      },
      {
        chainId: 1,
        name: 'ethereum',
        rpcUrls: [deadRpc],
        operatorRegistry: addrs.operatorRegistry,
        redeemOperator: addrs.redeemOperator,
        requestTimeoutMs: 2_000,
      },
      {
        // A registry address without code: the chain answers, but not as a registry.
        chainId: 56,
        name: 'bsc',
        rpcUrls: [node.rpcUrl],
        operatorRegistry: '0x000000000000000000000000000000000000dEaD',
        redeemOperator: addrs.redeemOperator,
      },
    ],
  });
  store = await createStore(config);
  server = await listen(
    createApp({ store, config, dataVersion: () => 1, ready: () => true }),
    '127.0.0.1',
    0,
  );
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
  await store?.close();
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('POST /v1/auto-claim/build-tx', () => {
  it('enables, then reports nothing to do, then disables; each transaction does what it says on chain', async () => {
    expect(await isOperator(user.address)).toBe(false);

    const enable = await post({ chainId: 98866, user: user.address.toLowerCase(), enabled: true });
    expect(enable.status).toBe(200);
    const d = enable.body.data;
    expect(d).toMatchObject({
      chainId: 98866,
      user: user.address,
      operatorRegistryAddress: addrs.operatorRegistry,
      operatorAddress: addrs.redeemOperator,
      enabled: true,
    });
    expect(d.transactions).toHaveLength(1);
    const [tx] = d.transactions;
    expect(tx).toMatchObject({ label: 'setOperator', to: addrs.operatorRegistry, value: '0' });
    expect(tx.description).toContain(addrs.redeemOperator);
    expect(tx.data.slice(0, 10)).toBe(SET_OPERATOR_SELECTOR);
    const decoded = decodeFunctionData({ abi: operatorRegistryAbi, data: tx.data });
    expect(decoded).toEqual({ functionName: 'setOperator', args: [addrs.redeemOperator, true] });
    await sendAsUser(tx);
    expect(await isOperator(user.address)).toBe(true);

    const again = await post({ chainId: 98866, user: user.address, enabled: true });
    expect(again.status).toBe(200);
    expect(again.body.data.transactions).toEqual([]);
    expect(again.body.data.enabled).toBe(true);

    const disable = await post({ chainId: 98866, user: user.address, enabled: false, skipSimulation: false });
    expect(disable.status).toBe(200);
    const [off] = disable.body.data.transactions;
    expect(decodeFunctionData({ abi: operatorRegistryAbi, data: off.data })).toEqual({
      functionName: 'setOperator',
      args: [addrs.redeemOperator, false],
    });
    await sendAsUser(off);
    expect(await isOperator(user.address)).toBe(false);

    const alreadyOff = await post({ chainId: 98866, user: user.address, enabled: false });
    expect(alreadyOff.body.data.transactions).toEqual([]);
  });

  it('refuses the zero address as the user (400, before the chain is asked)', async () => {
    const res = await post({ chainId: 98866, user: `0x${'0'.repeat(40)}`, enabled: true });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_BODY');
    expect(res.body.details).toEqual([
      { in: 'body', path: 'user', message: 'the zero address cannot be a user (no one can sign for it)' },
    ]);
  });

  it('is 422 with the decoded reason when the simulation reverts (user is the operator itself)', async () => {
    const res = await post({ chainId: 98866, user: addrs.redeemOperator, enabled: true });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('SIMULATION_REVERTED');
    expect(res.body.details.reason).toBe('CannotSetSelfAsOperator()');
    expect(res.body.error).toContain('CannotSetSelfAsOperator');
  });

  it('skips the simulation when asked, so a reverting call is still built', async () => {
    const res = await post({
      chainId: 98866,
      user: addrs.redeemOperator,
      enabled: true,
      skipSimulation: true,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.transactions).toHaveLength(1);
  });

  it('is 503 when the chain RPC is unreachable, the registry has no code, or the chain has no RPC configured', async () => {
    const down = await post({ chainId: 1, user: user.address, enabled: true });
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(down.body.error).toContain('chain 1');

    const noRegistry = await post({ chainId: 56, user: user.address, enabled: true });
    expect(noRegistry.status).toBe(503);
    expect(noRegistry.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(noRegistry.body.error).toContain('isOperator');

    const unconfigured = await post({ chainId: 8453, user: user.address, enabled: true });
    expect(unconfigured.status).toBe(503);
    expect(unconfigured.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(unconfigured.body.error).toContain('chain 8453');
  });

  it('is 400 naming the field for bad input, and changes nothing', async () => {
    const cases: [unknown, string][] = [
      [{ chainId: 98866, user: '0x1234', enabled: true }, 'user'],
      [{ chainId: 999, user: user.address, enabled: true }, 'chainId'],
      [{ chainId: 98866, user: user.address }, 'enabled'],
      [{ chainId: 98866, user: user.address, enabled: 'yes' }, 'enabled'],
      [{ chainId: 98866, user: user.address, enabled: true, extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('BAD_BODY');
      expect(res.body.details.map((i: { path: string }) => i.path)).toContain(field);
    }
    const notJson = await post('{"chainId":', 'application/json');
    expect(notJson.status).toBe(400);
    const wrongType = await post('chainId=1', 'text/plain');
    expect(wrongType.status).toBe(400);
    expect(await isOperator(user.address)).toBe(false);
  });
});
