/**
 * POST /v1/auto-claim/build-tx (docs/architecture.md, Endpoint semantics, build-tx): the transaction
 * that enables or disables the chain's redeem operator for a user on the chain's
 * ERC-7540 operator registry. Reads `isOperator(user, operator)` first: if the
 * registry already holds the wanted state there is nothing to sign. Otherwise one
 * `setOperator(operator, enabled)` call, simulated with `eth_call` from the user
 * unless `skipSimulation`; a revert is 422 with the decoded reason, a chain without
 * an RPC (or whose RPC fails) is 503. Never cached: the answer is chain state now.
 */
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  encodeFunctionData,
  getAddress,
  type PublicClient,
  parseAbi,
} from 'viem';
import { errorMessage } from '../../core/errors.ts';
import type { ChainConfig } from '../../core/settings/registry.ts';
import { chainTransport, type EvmRpcSettings } from '../../rpc/evm-transport.ts';
import { faultSummary } from '../../rpc/rpc-faults.ts';
import { ApiError, validationError } from '../http/errors.ts';
import { type BuildTxBody, buildTxBody, parseBody } from '../http/params.ts';
import type { HandlerMap } from './types.ts';

/** The registry's ABI as far as this endpoint needs it (OperatorRegistry). */
const registryAbi = parseAbi([
  'function isOperator(address controller, address operator) view returns (bool)',
  'function setOperator(address operator, bool approved) returns (bool)',
  'error CannotSetSelfAsOperator()',
]);

/**
 * The chain's registry, operator and RPC client; 503 when any of them is not configured.
 * The client reads through the service's EVM transport over every URL of the chain, with
 * retries; `signal` (the request's budget) ends them.
 */
function chainTarget(
  chains: ChainConfig[],
  chainId: number,
  budgetMs: number,
  rpc: EvmRpcSettings,
  signal: AbortSignal,
) {
  const chain = chains.find((c) => c.chainId === chainId);
  if (!chain?.rpcUrls.length)
    throw new ApiError('UPSTREAM_UNAVAILABLE', `no RPC endpoint is configured for chain ${chainId}`);
  if (!chain.operatorRegistry || !chain.redeemOperator)
    throw new ApiError(
      'UPSTREAM_UNAVAILABLE',
      `no operator registry or redeem operator is configured for chain ${chainId}`,
    );
  const client = createPublicClient({
    transport: chainTransport(chain, rpc, {
      timeoutMs: Math.min(chain.requestTimeoutMs, budgetMs),
      // At least one pass over the URLs; the request's budget bounds the wait either way.
      maxAttempts: Math.max(rpc.maxAttempts, chain.rpcUrls.length),
      signal,
    }),
  }) as PublicClient;
  return { client, registry: getAddress(chain.operatorRegistry), operator: getAddress(chain.redeemOperator) };
}

/** The revert's reason: `Error(string)` text, a custom error with its arguments, or the raw data. */
function revertReason(err: ContractFunctionRevertedError): string {
  if (err.reason) return err.reason;
  if (err.data) return `${err.data.errorName}(${(err.data.args ?? []).map(String).join(', ')})`;
  return err.raw ? `unknown error ${err.raw}` : 'reverted without a reason';
}

/** Maps a failed RPC call: a contract revert is the caller's (422), anything else the chain's (503). */
function rpcFailure(err: unknown, chainId: number, what: string): ApiError {
  const reverted =
    err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
  if (reverted instanceof ContractFunctionRevertedError) {
    const reason = revertReason(reverted);
    return new ApiError('SIMULATION_REVERTED', `${what} reverted: ${reason}`, { details: { reason } });
  }
  const detail = err instanceof BaseError ? faultSummary(err) : errorMessage(err);
  return new ApiError(
    'UPSTREAM_UNAVAILABLE',
    `the RPC of chain ${chainId} failed during ${what}: ${detail}`,
    {
      cause: err,
    },
  );
}

export const buildtxHandlers: HandlerMap = {
  // SQL: none: the chain (isOperator, eth_call).
  'POST /auto-claim/build-tx': async (ctx, deps) => {
    const body = parseBody(buildTxBody, ctx);
    // No one holds the zero address's key: a transaction "from" it can be built but never sent.
    if (/^0x0{40}$/i.test(body.user))
      throw validationError([
        { in: 'body', path: 'user', message: 'the zero address cannot be a user (no one can sign for it)' },
      ]);
    const budgetMs = deps.config.api.buildTx.timeoutMs;
    // Every RPC call of this request shares one budget: past it the answer is 503, not a hung
    // request, and the transport's retries stop.
    const budget = new AbortController();
    const target = chainTarget(deps.config.chains, body.chainId, budgetMs, deps.config.ingest, budget.signal);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ApiError(
              'UPSTREAM_UNAVAILABLE',
              `the RPC of chain ${body.chainId} did not answer within ${budgetMs} ms; retry later`,
              { headers: { 'Retry-After': '5' } },
            ),
          ),
        budgetMs,
      );
    });
    deadline.catch(() => {}); // settled by the race below, or never observed when the work wins
    try {
      ctx.body = await Promise.race([buildTx(target, body), deadline]);
    } finally {
      clearTimeout(timer);
      budget.abort();
    }
    ctx.set('Cache-Control', 'no-store');
  },
};

/** Reads the registry's state and, when it differs from the wanted one, builds (and simulates) the call. */
async function buildTx(
  { client, registry, operator }: ReturnType<typeof chainTarget>,
  body: BuildTxBody,
): Promise<unknown> {
  const user = getAddress(body.user);
  const current = await client
    .readContract({
      address: registry,
      abi: registryAbi,
      functionName: 'isOperator',
      args: [user, operator],
    })
    .catch((err: unknown) => {
      throw rpcFailure(err, body.chainId, 'isOperator');
    });
  const transactions = [];
  if (current !== body.enabled) {
    if (!body.skipSimulation)
      await simulate(client, { registry, operator, user, enabled: body.enabled, chainId: body.chainId });
    transactions.push({
      label: 'setOperator',
      description: `${body.enabled ? 'Approve' : 'Revoke'} ${operator} as redeem operator of ${user} on the operator registry`,
      to: registry,
      data: encodeFunctionData({
        abi: registryAbi,
        functionName: 'setOperator',
        args: [operator, body.enabled],
      }),
      value: '0',
    });
  }
  return {
    data: {
      chainId: body.chainId,
      user,
      operatorRegistryAddress: registry,
      operatorAddress: operator,
      enabled: body.enabled,
      transactions,
    },
  };
}

/** `eth_call` of setOperator from the user; throws the mapped error on revert or RPC failure. */
async function simulate(
  client: PublicClient,
  t: { registry: Address; operator: Address; user: Address; enabled: boolean; chainId: number },
): Promise<void> {
  await client
    .simulateContract({
      address: t.registry,
      abi: registryAbi,
      functionName: 'setOperator',
      args: [t.operator, t.enabled],
      account: t.user,
    })
    .catch((err: unknown) => {
      throw rpcFailure(err, t.chainId, 'the setOperator simulation');
    });
}
