/**
 * Every event ABI of the EVM ingester against the topic0 values published in the
 * reference (`reference/contracts-and-flows.md`, appendix), copied here verbatim.
 */
import { type Abi, type AbiEvent, toEventSelector, toEventSignature } from 'viem';
import { describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { KNOWN_TOPICS, topicsOf } from '../../ingest/evm/decode.ts';
import { MAPPED_EVENTS } from '../../ingest/evm/map.ts';

const APPENDIX = `
0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef  Transfer(address,address,uint256)
0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925  Approval(address,address,uint256)
0xea00f88768a86184a6e515238a549c171769fe7460a011d6fd0bcd48ca078ea4  Enter(address,address,uint256,address,uint256)
0xe0c82280a1164680e0cf43be7db4c4c9f985423623ad7a544fb76c772bdc6043  Exit(address,address,uint256,address,uint256)
0xbd5bec50a3d7a5321d4e870bbb48c3589043dbcea81010e6de54a32733aef592  Deposit(uint256,address,address,uint256,uint256,uint256,uint256,address)
0xe96d7872363f475d18b2f5390caaa5eaa96b2d38e42c62afe4ac08ebd2b13c3a  Deposit(uint256,address,address,uint256,uint256,uint256,uint256)
0x6f9b974223f85a1ae805c33b8b519039e2435481d949db1110de151a94d587af  BulkDeposit(address,uint256)
0xdcc60b41ff1c604459e6aa4a7299817416b19fc586a392f111646e26597c4af9  BulkWithdraw(address,uint256)
0x884edad9ce6fa2440d8a54cc123490eb96d2768479d49ff9c7366125a9424364  Withdraw(address,uint256)
0xaf98ea774275cadfa3e477a7b52cba03e01197445a76bd5d0d561608708c3624  DepositRefunded(uint256,bytes32,address)
0xe08301321781ac43935a2099b2c3fd42de0a0ee87a519cac00e8c9cecd26ff12  AssetDataUpdated(address,bool,bool,uint16)
0x9e87fac88ff661f02d44f95383c817fece4bce600a3dab7a54406878b965e752  Paused()
0xa45f47fdea8a1efdd9029a5691c7f759c32b7c698632b563573e155625d16933  Unpaused()
0xe0ec62d39b054dc2fd626dbc271483735df6e6fa1ef8389754bf8ab27a75eab2  MessageSent(bytes32,uint256,address)
0xb944fddc61d7fedb8b736790454ba972000703b0d21c7481d6dbf95b7c2cc2f1  MessageReceived(bytes32,uint256,address)
0xa95bc6aba40bbc4d95fc35f118c4cd8b53fc5d5b89ed264002af03503a7a9439  ExchangeRateUpdated(uint96,uint96,uint64)
0x9493e5bbe4e8e0ac67284469a2d677403d0378a85a59e341d3abc433d0d9a209  FeesClaimed(address,uint256)
0x98637d475d52bc596e25457cb3385a05269c42e57d4d9f7561dacbbe8583eb89  HighwaterMarkReset()
0x84e4fe32bf74c4011a7e1fde79c63acdffaf92a0112cde153e7b0abee665bc6b  PlatformFeeUpdated(uint16,uint16)
0xba8506b6cb85330fea21cbca8490aafb6a69b166f06201ef755eb511b2709fc1  PerformanceFeeUpdated(uint16,uint16)
0x7fa71bc8199b41215c8786fc03983be5a27180965feae35db511cd958631826f  ManagementFeeUpdated(uint16,uint16)
0x445134a9663f61e88491e94ab4813fb5b28a76d4145bcb1b567d45c675e0f57d  ManagementFeeUpdated(uint32,uint32)
0x9addc5eeb11c6317acf61d62e36638a1bf153e3e0fd2ee245a97a07bd98d5851  PerformanceFeeUpdated(uint32,uint32)
0x956df88aa3d1b27883cf4a03107dfab769c0bae9f4ad7f28f8641ccbbede26ad  ExchangeRateUpdatePaused(uint96,uint96,uint64)
0xf8ede959258dbd0f1b25dacf0700ab42800ef707344ade735eee189b8db8a503  TotalPendingSharesUpdated(uint256,uint256)
0xf75571b7f10eb453e75a9717fb6c83c845d35cf74a1a63c9bdf8d6dec61781ba  HighWaterMarkUpdated(uint96,uint96)
0x9537495a2390e1a29f5f7e71b8540f5140bba27065f173615b770ad79d2f7960  AtomicRequestUpdated(address,address,address,uint256,uint256,uint256,uint256)
0xa4e3f90ef19273220b37cbbbcfe402a6eadd9559c54813b9be52ea0c9612d6c9  AtomicRequestFulfilled(address,address,address,uint256,uint256,uint256)
0x2eb08ebdb4d68b4a37e3b424927f3363e1d799ca7e56e7b2c59cc6c1778d33f5  OnChainWithdrawRequested(bytes32,address,address,uint96,uint128,uint128,uint40,uint24,uint24)
0x114ef421aef557f2e4086396789e7fb532b1133ff2982c9d948daa73d0691e36  OnChainWithdrawCancelled(bytes32,address,uint256)
0xd94fc49a6578873ff851671d19cacb1809887f7a9128867ee4306dc3ffc93c26  OnChainWithdrawSolved(bytes32,address,uint256)
0x4c9bdd0c8e073eb5eda2250b18d8e5121ff27b62064fbeeeed4869bb99bc5bf2  UserRoleUpdated(address,uint8,bool)
0xa52ea92e6e955aa8ac66420b86350f7139959adfcc7e6a14eee1bd116d09860e  RoleCapabilityUpdated(uint8,address,bytes4,bool)
0x950a343f5d10445e82a71036d3f4fb3016180a25805141932543b83e2078a93e  PublicCapabilityUpdated(address,bytes4,bool)
0x0e92d4e680700857c233463d7e0f1eae645ceb31551b23d84b06307b266782a9  UserRootUpdated(address,bool)
0x8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e0  OwnershipTransferred(address,address)
0xa3396fd7f6e0a21b50e5089d2da70d5ac0a3bbbd1f617a93f134b76389980198  AuthorityUpdated(address,address)
0xceb576d9f15e4e200fdb5096d64d5dfd667e16def20c1eefd14256d8e3faa267  OperatorSet(address,address,bool)
0x1fdc681a13d8c5da54e301c7ce6542dcde4581e4725043fdab2db12ddc574506  RedeemRequest(address,address,uint256,address,uint256)
0xfaa234a1781dd0ca647cada24c6572fd2621b67d67cf142c7c927fe008ed20fd  RedeemFulfilled(address,uint256,uint256,uint256)
0x96d6f0dd5c7e07efd45891491305a85f9d330a2a2dd59bd2bc737f7415a89a4b  RedeemUpdated(address,address,address,uint256,uint256)
0xd2cd5496d655fc6fc5fa785b7dd24cc2d7676a5b6cf3d8d86f422161764a81fe  InstantRedeem(uint256,uint256,uint256,address)
0xfbde797d201c681b91056529119e0b02407c7bb96a4a2c75c01fc9667232c8db  Withdraw(address,address,address,uint256,uint256)
0xdcbc1c05240f31ff3ad067ef1ee35ce4997762752e3a095284754544f4c709d7  Deposit(address,address,uint256,uint256)
0x890f435a2d9c171dcf1d6b7c8311f4d8443c30c59c97bea65e2f3ab37ad0e8f9  ReceiverSet(address,address,address)
0x8d919ce55dbd0ee9422db60f9a1133c5646440fabbc596eef82456394f9c7df3  Deposit(address,address,uint256,uint256,uint256,address)
0x85496b760a4b7f8d66384b9df21b381f5d1b1e79f229a47aaf4c232edc2fe59a  OFTSent(bytes32,uint32,address,uint256,uint256)
0xefed6d3500546b29533b128a29e3a94d70788727f0507505ac12eaf2e578fd9c  OFTReceived(bytes32,uint32,address,uint256)
0x27b5aea9f5736c02241d8a0272e9ec988ea44cf85c4b4760329431aa19678394  Sent(bytes32)
0xfe509803c09416b28ff3d8f690c8b0c61462a892c46d5430c8fb20abe472daf0  Refunded(bytes32)
0xa53b96f27930f89fac6e5802f6b77fcad303dde855a10e5ef076e730d1f43afa  Deposited(bytes32,bytes32,uint32,uint256,uint256)
0x57e232f18448926c8d7554dfd1851d4a4cd10d6b804aabcd714b1f1c067e50ee  Redeemed(bytes32,bytes32,uint32,uint256,uint256)
0x4fed457497d679964253a5733f499bdfad337c993562280356e6fa5d026109b6  HookFailed(bytes32)
0x2bc9010ea3ee76d6df3b0290d921f994557a78849ff1d6ca846d837609ccc929  HookRelayed(bytes32)
0xfe509803c09416b28ff3d8f690c8b0c61462a892c46d5430c8fb20abe472daf0  Refunded(bytes32)
0x9f255ed0b96a5f07e8ecdee8c4dc3971cb24618c71ff7e148d45155ea8fd110d  EidToDomainSet(uint32,uint32)
0x3cd9174d5daf6b359433bc1591a606ee6f579489293a2ce14ff24265758f6d0b  SetFee(uint8,(uint32,uint256),(uint32,uint256))
0x1f527d226c09541cf7b922990843fca178141d5a96a614b5cafc484eb6209c01  FeeClaimed(uint8,address,uint256)
0xf8b0ee9361a0f0225b39f58411465016adbd34abff194e6119b537fa8b063247  OperatorRegistryUpdated(address,address)
0x693125a3b78af1d52648ddb37eb1cabcd8e9592ac0257774d0af6d43860b6f3e  SetAccountant(address,address)
0xccd4bf7730358ff10a65cd9895ad6aeb28ef3d2fcbdebaa6407be0f424cecd34  SharesSeized(address,address,address,uint256)
0x6a12b3df6cba4203bd7fd06b816789f87de8c594299aed5717ae070fac781bac  BlacklistUpdated(address,bool)
0x8c5261668696ce22758910d05bab8f186d6eb247ceac2af2e82c7dc17669b036  MessageSent(bytes)
0x58200b4c34ae05ee816d710053fff3fb75af4395915d3d2a771b24aa10e3cc5d  MessageReceived(address,uint32,uint64,bytes32,bytes)
0xff48c13eda96b1cceacc6b9edeedc9e9db9d6226afbc30146b720c19d3addb1c  MessageReceived(address,uint32,bytes32,bytes32,uint32,bytes)
0x2fa9ca894982930190727e75500a97d8dc500233a5065e0f3126c48fbe0343c0  DepositForBurn(uint64,address,uint256,address,bytes32,uint32,bytes32,bytes32)
0x0c8c1cbdc5190613ebd485511d4e2812cfa45eecb79d845893331fedad5130a5  DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)
0x1b2a7ff080b8cb6ff436ce0372e399692bbfb6d4ae5766fd8d58a7b8cc6142e6  MintAndWithdraw(address,uint256,address)
0x50c55e915134d457debfa58eb6f4342956f8b0616d51a89a3659360178e1ab63  MintAndWithdraw(address,uint256,address,uint256)
0x1ab700d4ced0c005b164c0f789fd09fcbb0156d4c2041b8a3bfbcd961cd1567f  PacketSent(bytes,bytes,address)
0x3cd5e48f9730b129dc7550f0fcea9c767b7be37837cd10e55eb35f734f4bca04  PacketDelivered((uint32,bytes32,uint64),address)
0x3d52ff888d033fd3dd1d8057da59e850c91d91a72c41dfa445b247dfedeb6dc1  ComposeSent(address,address,bytes32,uint16,bytes)
0x0036c98efcf9e6641dfbc9051f66f405253e8e0c2ab4a24dccda15595b7378c8  ComposeDelivered(address,address,bytes32,uint16)
0x8a0b1dce321c5c5fb42349bce46d18087c04140de520917661fb923e44a904b9  LzComposeAlert(address,address,address,bytes32,uint16,uint256,uint256,bytes,bytes,bytes)
`;

const published = new Map(
  APPENDIX.trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .map(([topic, signature]) => [signature, topic]),
);

const events = Object.values(abis)
  .flatMap((abi) => abi as Abi)
  .filter((i): i is AbiEvent => i.type === 'event');

describe('EVM ABIs', () => {
  it('match the published topic0 of every event the reference lists', () => {
    const unlisted: string[] = [];
    let checked = 0;
    for (const e of events) {
      const signature = toEventSignature(e);
      const topic = published.get(signature);
      if (!topic) {
        unlisted.push(signature);
        continue;
      }
      expect(toEventSelector(e), signature).toBe(topic);
      checked++;
    }
    // Only the Nucleus teller's asset-list events are named but not hashed in the reference.
    expect(new Set(unlisted)).toEqual(new Set(['AssetAdded(address)', 'AssetRemoved(address)']));
    expect(checked).toBeGreaterThanOrEqual(45);
  });

  it('tells the two teller Deposit families apart by topic0', () => {
    const veda = abis.tellerVedaEvents.find((e) => e.type === 'event' && e.name === 'Deposit') as AbiEvent;
    const nucleus = abis.tellerNucleusEvents.find(
      (e) => e.type === 'event' && e.name === 'Deposit',
    ) as AbiEvent;
    expect(toEventSelector(veda)).toBe('0xbd5bec50a3d7a5321d4e870bbb48c3589043dbcea81010e6de54a32733aef592');
    expect(toEventSelector(nucleus)).toBe(
      '0xe96d7872363f475d18b2f5390caaa5eaa96b2d38e42c62afe4ac08ebd2b13c3a',
    );
  });

  it('decodes every topic0 once, and asks the node only for the events that are published', () => {
    expect(new Set(KNOWN_TOPICS).size).toBe(KNOWN_TOPICS.length);
    for (const e of events) expect(KNOWN_TOPICS).toContain(toEventSelector(e));
    const fetched = topicsOf(MAPPED_EVENTS);
    const published = (abi: readonly unknown[], name: string) =>
      (abi as AbiEvent[]).filter((e) => e.type === 'event' && e.name === name).map((e) => toEventSelector(e));
    expect(new Set(fetched)).toEqual(
      new Set([
        ...['Transfer', 'Enter', 'Exit', 'OFTSent', 'OFTReceived'].flatMap((n) =>
          published(abis.shareEvents, n),
        ),
        ...published(abis.tellerVedaEvents, 'Deposit'),
        ...published(abis.tellerNucleusEvents, 'Deposit'),
        ...['MessageSent', 'MessageReceived'].flatMap((n) => published(abis.crossChainPlainEvents, n)),
        ...[
          'ExchangeRateUpdated',
          'FeesClaimed',
          'PlatformFeeUpdated',
          'PerformanceFeeUpdated',
          'ManagementFeeUpdated',
        ].flatMap((n) => published(abis.accountantEvents, n)),
        ...['ManagementFeeUpdated', 'PerformanceFeeUpdated'].flatMap((n) =>
          published(abis.nestAccountantEvents, n),
        ),
        ...published(abis.authorityEvents, 'UserRoleUpdated'),
        ...['AtomicRequestUpdated', 'AtomicRequestFulfilled'].flatMap((n) =>
          published(abis.atomicQueuePlainEvents, n),
        ),
        ...[
          'Deposit',
          'RedeemRequest',
          'RedeemUpdated',
          'RedeemFulfilled',
          'Withdraw',
          'InstantRedeem',
          'FeeClaimed',
          // Stored as fee_rates, and it prices the deposits after it (deposit-fees.ts).
          'SetFee',
          'OperatorSet',
        ].flatMap((n) => published(abis.nestVaultEvents, n)),
        ...published(abis.operatorRegistryEvents, 'OperatorSet'),
      ]),
    );
    // Approvals are frequent on a share token and have no family: never fetched.
    expect(fetched).not.toContain(
      toEventSelector(abis.shareEvents.find((e) => e.name === 'Approval') as AbiEvent),
    );
  });
});
