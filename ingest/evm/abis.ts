/**
 * The ABIs the EVM ingester reads, as the upstream Nucleus and Nest contracts emit them.
 * Where two deployments share an event name with different shapes (the Veda and Nucleus
 * teller `Deposit`, the indexed and unindexed AtomicQueue events, the
 * cross-chain teller messages) each shape has its own ABI: `decode.ts` tells them
 * apart by topic0 and by the number of topics. `test/ingest/evm-abis.test.ts` checks
 * every topic0 against the published values the test holds.
 */
import { parseAbi } from 'viem';

/** BoringVault / NestShareOFT share token. */
export const shareEvents = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 amount)',
  'event Approval(address indexed owner, address indexed spender, uint256 amount)',
  'event Enter(address indexed from, address indexed asset, uint256 amount, address indexed to, uint256 shares)',
  'event Exit(address indexed to, address indexed asset, uint256 amount, address indexed from, uint256 shares)',
  'event OwnershipTransferred(address indexed user, address indexed newOwner)',
  'event AuthorityUpdated(address indexed user, address indexed newAuthority)',
  'event OFTSent(bytes32 indexed guid, uint32 dstEid, address indexed fromAddress, uint256 amountSentLD, uint256 amountReceivedLD)',
  'event OFTReceived(bytes32 indexed guid, uint32 srcEid, address indexed toAddress, uint256 amountReceivedLD)',
]);

/** A separate OFT adapter of a share token: only its bridge events (the same shapes as the share's). */
export const oftEvents = shareEvents.filter((e) => e.name === 'OFTSent' || e.name === 'OFTReceived');

/** Teller events common to both families, and Veda's own. */
export const tellerVedaEvents = parseAbi([
  'event Deposit(uint256 nonce, address indexed receiver, address indexed depositAsset, uint256 depositAmount, uint256 shareAmount, uint256 depositTimestamp, uint256 shareLockPeriodAtTimeOfDeposit, address indexed referralAddress)',
  'event BulkDeposit(address indexed asset, uint256 depositAmount)',
  'event BulkWithdraw(address indexed asset, uint256 shareAmount)',
  'event Withdraw(address indexed asset, uint256 shareAmount)',
  'event DepositRefunded(uint256 indexed nonce, bytes32 depositHash, address indexed user)',
  'event AssetDataUpdated(address indexed asset, bool allowDeposits, bool allowWithdraws, uint16 sharePremium)',
  'event Paused()',
  'event Unpaused()',
]);

/** Nucleus/Plume teller: `Deposit` with an indexed nonce and no referral. */
export const tellerNucleusEvents = parseAbi([
  'event Deposit(uint256 indexed nonce, address indexed receiver, address indexed depositAsset, uint256 depositAmount, uint256 shareAmount, uint256 depositTimestamp, uint256 shareLockPeriodAtTimeOfDeposit)',
  'event AssetAdded(address indexed asset)',
  'event AssetRemoved(address indexed asset)',
]);

/** Cross-chain tellers, Veda: `messageId` and `to` indexed. */
export const crossChainIndexedEvents = parseAbi([
  'event MessageSent(bytes32 indexed messageId, uint256 shareAmount, address indexed to)',
  'event MessageReceived(bytes32 indexed messageId, uint256 shareAmount, address indexed to)',
]);

/** Cross-chain tellers, Nucleus: the same topic0, nothing indexed. */
export const crossChainPlainEvents = parseAbi([
  'event MessageSent(bytes32 messageId, uint256 shareAmount, address to)',
  'event MessageReceived(bytes32 messageId, uint256 shareAmount, address to)',
]);

/** AccountantWithRateProviders events of both families. */
export const accountantEvents = parseAbi([
  'event ExchangeRateUpdated(uint96 oldRate, uint96 newRate, uint64 currentTime)',
  'event FeesClaimed(address indexed feeAsset, uint256 amount)',
  'event PlatformFeeUpdated(uint16 oldFee, uint16 newFee)',
  'event PerformanceFeeUpdated(uint16 oldFee, uint16 newFee)',
  'event HighwaterMarkReset()',
  'event ManagementFeeUpdated(uint16 oldFee, uint16 newFee)',
]);

/** Nest accountants (1e6 scale fees). */
export const nestAccountantEvents = parseAbi([
  'event ManagementFeeUpdated(uint32 oldFee, uint32 newFee)',
  'event PerformanceFeeUpdated(uint32 oldFee, uint32 newFee)',
  'event ExchangeRateUpdatePaused(uint96 oldRate, uint96 newRate, uint64 currentTime)',
  'event TotalPendingSharesUpdated(uint256 oldValue, uint256 newValue)',
  'event HighWaterMarkUpdated(uint96 oldValue, uint96 newValue)',
]);

/** AtomicQueue, Veda: user, offer and want indexed (4 topics). */
export const atomicQueueIndexedEvents = parseAbi([
  'event AtomicRequestUpdated(address indexed user, address indexed offerToken, address indexed wantToken, uint256 amount, uint256 deadline, uint256 minPrice, uint256 timestamp)',
  'event AtomicRequestFulfilled(address indexed user, address indexed offerToken, address indexed wantToken, uint256 offerAmountSpent, uint256 wantAmountReceived, uint256 timestamp)',
]);

/** AtomicQueue, Nucleus / AtomicQueueV2 / UCP: the same topic0, nothing indexed (1 topic). */
export const atomicQueuePlainEvents = parseAbi([
  'event AtomicRequestUpdated(address user, address offerToken, address wantToken, uint256 amount, uint256 deadline, uint256 minPrice, uint256 timestamp)',
  'event AtomicRequestFulfilled(address user, address offerToken, address wantToken, uint256 offerAmountSpent, uint256 wantAmountReceived, uint256 timestamp)',
]);

/** Solmate RolesAuthority. */
export const authorityEvents = parseAbi([
  'event UserRoleUpdated(address indexed user, uint8 indexed role, bool enabled)',
  'event RoleCapabilityUpdated(uint8 indexed role, address indexed target, bytes4 indexed functionSig, bool enabled)',
  'event PublicCapabilityUpdated(address indexed target, bytes4 indexed functionSig, bool enabled)',
  'event UserRootUpdated(address indexed user, bool enabled)',
]);

/** NestVault / NestVaultOFT (ERC-7540 async redeem, ERC-7575). */
export const nestVaultEvents = parseAbi([
  'event Deposit(address indexed caller, address indexed receiver, uint256 assets, uint256 shares)',
  'event RedeemRequest(address indexed controller, address indexed owner, uint256 indexed requestId, address sender, uint256 shares)',
  'event RedeemFulfilled(address indexed controller, uint256 shares, uint256 assets, uint256 actualAssets)',
  'event RedeemUpdated(address controller, address receiver, address caller, uint256 oldShares, uint256 newShares)',
  'event InstantRedeem(uint256 shares, uint256 assets, uint256 postFeeAmount, address receiver)',
  'event Withdraw(address indexed caller, address indexed receiver, address indexed controller, uint256 assets, uint256 shares)',
  'event OperatorSet(address indexed controller, address indexed operator, bool approved)',
  'event SetFee(uint8 indexed f, (uint32 rate, uint256 flat) oldFee, (uint32 rate, uint256 flat) fee)',
  'event FeeClaimed(uint8 indexed f, address indexed receiver, uint256 amount)',
]);

/** The chain's ERC-7540 OperatorRegistry (`nest:contracts/operators/OperatorRegistry.sol`). */
export const operatorRegistryEvents = parseAbi([
  'event OperatorSet(address indexed controller, address indexed operator, bool approved)',
]);

/** NestVault `fees(f)`: the fee setting of a kind (`f`: 0 instant redemption, 1 deposit, 2 redemption). */
export const nestVaultViews = parseAbi(['function fees(uint8 f) view returns ((uint32 rate, uint256 flat))']);

/** Paused()/Unpaused(), emitted by tellers, accountants and queues alike. */
export const pauseEvents = parseAbi(['event Paused()', 'event Unpaused()']);

/** Views read by the snapshots. */
export const erc20Views = parseAbi([
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address owner) view returns (uint256)',
  'function decimals() view returns (uint8)',
]);

/** Accountant views; `accountantState()` is read raw and decoded by its length (see `accountant.ts`). */
export const accountantViews = parseAbi([
  'function getRate() view returns (uint256)',
  'function base() view returns (address)',
]);

/** `accountantState()` return layouts: Veda (12 words) and Nucleus/Plume legacy (10 words). */
export const accountantStateVeda = parseAbi([
  'function accountantState() view returns (address payoutAddress, uint96 highwaterMark, uint128 feesOwedInBase, uint128 totalSharesLastUpdate, uint96 exchangeRate, uint16 allowedExchangeRateChangeUpper, uint16 allowedExchangeRateChangeLower, uint64 lastUpdateTimestamp, bool isPaused, uint24 minimumUpdateDelayInSeconds, uint16 platformFee, uint16 performanceFee)',
]);
export const accountantStateNucleus = parseAbi([
  'function accountantState() view returns (address payoutAddress, uint128 feesOwedInBase, uint128 totalSharesLastUpdate, uint96 exchangeRate, uint16 allowedExchangeRateChangeUpper, uint16 allowedExchangeRateChangeLower, uint64 lastUpdateTimestamp, bool isPaused, uint32 minimumUpdateDelayInSeconds, uint16 managementFee)',
]);

/** Multicall3 `aggregate3`: per-call failure allowed, so one bad read spoils nothing else. */
export const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);
