/**
 * The devnet contracts emit exactly the reference's events: every event's topic0
 * equals the value in the appendix of contracts-and-flows.md (copied below, not
 * computed by the code under test) and its indexed-parameter count equals the
 * signature's starred parameters, so logs carry the same topic count as mainnet.
 * Also checks that devnet/abis.ts is the compiled output (regenerate with
 * `npx tsx devnet/gen-abis.ts`).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Abi, type AbiEvent, toEventSelector, toFunctionSelector } from 'viem';
import { describe, expect, it } from 'vitest';
import * as abiModule from '../../devnet/abis.ts';
import { compileContracts } from '../../devnet/compile.ts';
import { ABI_EXPORTS, type ContractName } from '../../devnet/contracts.ts';

/** [ABI export, event name, topic0 from the reference appendix, indexed parameters per the reference]. */
const EXPECTED: [string, string, string, number][] = [
  ['boringVaultAbi', 'Transfer', '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', 2],
  ['boringVaultAbi', 'Approval', '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925', 2],
  ['boringVaultAbi', 'Enter', '0xea00f88768a86184a6e515238a549c171769fe7460a011d6fd0bcd48ca078ea4', 3],
  ['boringVaultAbi', 'Exit', '0xe0c82280a1164680e0cf43be7db4c4c9f985423623ad7a544fb76c772bdc6043', 3],
  ['tellerVedaAbi', 'Deposit', '0xbd5bec50a3d7a5321d4e870bbb48c3589043dbcea81010e6de54a32733aef592', 3],
  ['tellerNucleusAbi', 'Deposit', '0xe96d7872363f475d18b2f5390caaa5eaa96b2d38e42c62afe4ac08ebd2b13c3a', 3],
  ['tellerVedaAbi', 'BulkDeposit', '0x6f9b974223f85a1ae805c33b8b519039e2435481d949db1110de151a94d587af', 1],
  ['tellerVedaAbi', 'BulkWithdraw', '0xdcc60b41ff1c604459e6aa4a7299817416b19fc586a392f111646e26597c4af9', 1],
  [
    'tellerNucleusAbi',
    'BulkDeposit',
    '0x6f9b974223f85a1ae805c33b8b519039e2435481d949db1110de151a94d587af',
    1,
  ],
  [
    'tellerNucleusAbi',
    'BulkWithdraw',
    '0xdcc60b41ff1c604459e6aa4a7299817416b19fc586a392f111646e26597c4af9',
    1,
  ],
  [
    'accountantAbi',
    'ExchangeRateUpdated',
    '0xa95bc6aba40bbc4d95fc35f118c4cd8b53fc5d5b89ed264002af03503a7a9439',
    0,
  ],
  ['accountantAbi', 'FeesClaimed', '0x9493e5bbe4e8e0ac67284469a2d677403d0378a85a59e341d3abc433d0d9a209', 1],
  [
    'accountantAbi',
    'ManagementFeeUpdated',
    '0x7fa71bc8199b41215c8786fc03983be5a27180965feae35db511cd958631826f',
    0,
  ],
  [
    'accountantAbi',
    'PlatformFeeUpdated',
    '0x84e4fe32bf74c4011a7e1fde79c63acdffaf92a0112cde153e7b0abee665bc6b',
    0,
  ],
  ['accountantAbi', 'Paused', '0x9e87fac88ff661f02d44f95383c817fece4bce600a3dab7a54406878b965e752', 0],
  ['accountantAbi', 'Unpaused', '0xa45f47fdea8a1efdd9029a5691c7f759c32b7c698632b563573e155625d16933', 0],
  [
    'atomicQueueVedaAbi',
    'AtomicRequestUpdated',
    '0x9537495a2390e1a29f5f7e71b8540f5140bba27065f173615b770ad79d2f7960',
    3,
  ],
  [
    'atomicQueueVedaAbi',
    'AtomicRequestFulfilled',
    '0xa4e3f90ef19273220b37cbbbcfe402a6eadd9559c54813b9be52ea0c9612d6c9',
    3,
  ],
  [
    'atomicQueueNucleusAbi',
    'AtomicRequestUpdated',
    '0x9537495a2390e1a29f5f7e71b8540f5140bba27065f173615b770ad79d2f7960',
    0,
  ],
  [
    'atomicQueueNucleusAbi',
    'AtomicRequestFulfilled',
    '0xa4e3f90ef19273220b37cbbbcfe402a6eadd9559c54813b9be52ea0c9612d6c9',
    0,
  ],
  [
    'rolesAuthorityAbi',
    'UserRoleUpdated',
    '0x4c9bdd0c8e073eb5eda2250b18d8e5121ff27b62064fbeeeed4869bb99bc5bf2',
    2,
  ],
  ['nestVaultAbi', 'Deposit', '0xdcbc1c05240f31ff3ad067ef1ee35ce4997762752e3a095284754544f4c709d7', 2],
  ['nestVaultAbi', 'RedeemRequest', '0x1fdc681a13d8c5da54e301c7ce6542dcde4581e4725043fdab2db12ddc574506', 3],
  [
    'nestVaultAbi',
    'RedeemFulfilled',
    '0xfaa234a1781dd0ca647cada24c6572fd2621b67d67cf142c7c927fe008ed20fd',
    1,
  ],
  ['nestVaultAbi', 'InstantRedeem', '0xd2cd5496d655fc6fc5fa785b7dd24cc2d7676a5b6cf3d8d86f422161764a81fe', 0],
  ['nestVaultAbi', 'Withdraw', '0xfbde797d201c681b91056529119e0b02407c7bb96a4a2c75c01fc9667232c8db', 3],
  ['nestVaultAbi', 'OperatorSet', '0xceb576d9f15e4e200fdb5096d64d5dfd667e16def20c1eefd14256d8e3faa267', 2],
  ['nestVaultAbi', 'SetFee', '0x3cd9174d5daf6b359433bc1591a606ee6f579489293a2ce14ff24265758f6d0b', 1],
  ['nestVaultAbi', 'FeeClaimed', '0x1f527d226c09541cf7b922990843fca178141d5a96a614b5cafc484eb6209c01', 2],
  [
    'operatorRegistryAbi',
    'OperatorSet',
    '0xceb576d9f15e4e200fdb5096d64d5dfd667e16def20c1eefd14256d8e3faa267',
    2,
  ],
  ['relayerAbi', 'HookRelayed', '0x2bc9010ea3ee76d6df3b0290d921f994557a78849ff1d6ca846d837609ccc929', 0],
  ['relayerAbi', 'HookFailed', '0x4fed457497d679964253a5733f499bdfad337c993562280356e6fa5d026109b6', 0],
  ['relayerAbi', 'Refunded', '0xfe509803c09416b28ff3d8f690c8b0c61462a892c46d5430c8fb20abe472daf0', 0],
  ['composerAbi', 'Deposited', '0xa53b96f27930f89fac6e5802f6b77fcad303dde855a10e5ef076e730d1f43afa', 0],
  ['composerAbi', 'Sent', '0x27b5aea9f5736c02241d8a0272e9ec988ea44cf85c4b4760329431aa19678394', 1],
  ['composerAbi', 'Refunded', '0xfe509803c09416b28ff3d8f690c8b0c61462a892c46d5430c8fb20abe472daf0', 1],
  ['shareOftAbi', 'OFTSent', '0x85496b760a4b7f8d66384b9df21b381f5d1b1e79f229a47aaf4c232edc2fe59a', 2],
  ['shareOftAbi', 'OFTReceived', '0xefed6d3500546b29533b128a29e3a94d70788727f0507505ac12eaf2e578fd9c', 2],
];

/** Function selectors named in the reference. */
const SELECTORS: [string, string, string][] = [
  ['boringVaultAbi', 'enter', '0x39d6ba32'],
  ['boringVaultAbi', 'exit', '0x18457e61'],
  ['tellerVedaAbi', 'deposit', '0x0efe6a8b'],
  ['tellerNucleusAbi', 'bulkDeposit', '0x9d574420'],
  ['tellerNucleusAbi', 'bulkWithdraw', '0x3e64ce99'],
  ['accountantAbi', 'accountantState', '0x433255de'],
  ['accountantAbi', 'getRate', '0x679aefce'],
  ['accountantAbi', 'getRateInQuote', '0x1dcbb110'],
  ['accountantAbi', 'updateExchangeRate', '0x3458113d'],
  ['accountantAbi', 'pause', '0x8456cb59'],
  ['accountantAbi', 'unpause', '0x3f4ba83a'],
  ['atomicQueueVedaAbi', 'getUserAtomicRequest', '0x433a8534'],
  ['atomicQueueVedaAbi', 'solve', '0xd93fc203'],
  ['nestVaultAbi', 'requestRedeem', '0x7d41c86e'],
  ['nestVaultAbi', 'fulfillRedeem', '0x36ac15ef'],
  ['nestVaultAbi', 'pendingRedeemRequest', '0xf5a23d8d'],
  ['nestVaultAbi', 'claimableRedeemRequest', '0xeaed1d07'],
  ['operatorRegistryAbi', 'setOperator', '0x558a7297'],
];

/** Every exported ABI by export name. */
const abis: Record<string, Abi> = { ...abiModule };

function item(abi: Abi, type: 'event' | 'function', name: string) {
  const found = abi.filter((x) => x.type === type && 'name' in x && x.name === name);
  expect(found, `${type} ${name}`).toHaveLength(1);
  return found[0];
}

describe('devnet contract ABIs', () => {
  it.each(EXPECTED)('%s %s has the reference topic0 and indexed count', (exp, name, topic0, indexed) => {
    const ev = item(abis[exp], 'event', name) as AbiEvent;
    expect(toEventSelector(ev)).toBe(topic0);
    expect(ev.inputs.filter((i) => i.indexed).length).toBe(indexed);
  });

  it.each(SELECTORS)('%s %s has the reference selector', (exp, name, selector) => {
    expect(toFunctionSelector(item(abis[exp], 'function', name) as never)).toBe(selector);
  });

  it('orders accountantState() as the Nucleus struct', () => {
    const fn = item(abiModule.accountantAbi, 'function', 'accountantState') as unknown as {
      outputs: { name: string; type: string }[];
    };
    expect(fn.outputs.map((o) => `${o.type} ${o.name}`)).toEqual([
      'address payoutAddress',
      'uint128 feesOwedInBase',
      'uint128 totalSharesLastUpdate',
      'uint96 exchangeRate',
      'uint16 allowedExchangeRateChangeUpper',
      'uint16 allowedExchangeRateChangeLower',
      'uint64 lastUpdateTimestamp',
      'bool isPaused',
      'uint32 minimumUpdateDelayInSeconds',
      'uint16 managementFee',
    ]);
  });

  it('caches the compiled output by source hash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vs-solc-'));
    try {
      const src = join(dir, 'src');
      const cacheDir = join(dir, 'cache');
      mkdirSync(src);
      writeFileSync(
        join(src, 'A.sol'),
        'pragma solidity ^0.8.20; contract A { function f() external pure returns (uint256) { return 1; } }',
      );
      const first = compileContracts({ dir: src, cacheDir });
      expect(first.A.bytecode.startsWith('0x60')).toBe(true);
      const [file] = readdirSync(cacheDir);
      // A cache hit returns the file's content: mark it and see the mark come back.
      writeFileSync(join(cacheDir, file), JSON.stringify({ ...first, Marker: first.A }));
      expect(Object.keys(compileContracts({ dir: src, cacheDir }))).toEqual(['A', 'Marker']);
      // A changed source is another key: compiled afresh.
      writeFileSync(
        join(src, 'A.sol'),
        'pragma solidity ^0.8.20; contract A { function f() external pure returns (uint256) { return 2; } }',
      );
      const second = compileContracts({ dir: src, cacheDir });
      expect(Object.keys(second)).toEqual(['A']);
      expect(second.A.deployedBytecode).not.toBe(first.A.deployedBytecode);
      expect(readdirSync(cacheDir)).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('devnet/abis.ts is the compiled output', () => {
    const compiled = compileContracts();
    for (const name of Object.keys(ABI_EXPORTS) as ContractName[])
      expect(abis[ABI_EXPORTS[name]], name).toEqual(compiled[name].abi);
  });
});
