// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";
import {Owned} from "./Owned.sol";

/// @notice Nest hub accountant (reference section 6): `getAccountantState()` with the hub's 14-field struct,
/// fees and bounds in 1e6 = 100%, `updateExchangeRate(grossRate, totalShareSupplyAcrossChains)` that reverts
/// when out of bounds or too early and stores the net rate.
/// Devnet fee arithmetic (simpler than Nest's; the simulator mirrors it exactly):
///   shares = min(totalSharesLastUpdate, totalShareSupplyAcrossChains)
///   management = shares * min(lastGrossRate, grossRate) / oneShare * managementFee / 1e6 * dt / 365 days
///   performance = grossRate > highWaterMark ? shares * (grossRate - highWaterMark) / oneShare * performanceFee / 1e6 : 0
///   feesOwedInBase += management + performance; net rate = grossRate - (management + performance) * oneShare / shares.
contract NestHubAccountant is Owned {
    struct AccountantState {
        address payoutAddress;
        uint128 feesOwedInBase;
        uint128 totalSharesLastUpdate;
        uint96 exchangeRate;
        uint32 allowedExchangeRateChangeUpper;
        uint32 allowedExchangeRateChangeLower;
        uint64 lastUpdateTimestamp;
        bool isPaused;
        uint32 minimumUpdateDelayInSeconds;
        uint32 managementFee;
        uint96 highWaterMark;
        uint96 lastGrossRate;
        uint96 clawbackReferenceRate;
        uint64 hwmLastUpdateTimestamp;
    }

    struct PerformanceFeeConfig {
        uint32 performanceFee;
        uint32 hurdleRate;
        uint32 holdbackRate;
        uint32 crystallizationWindow;
        uint32 epochsPerWindow;
    }

    event FeesClaimed(address indexed feeAsset, uint256 amount);
    event Paused();
    event Unpaused();
    event ManagementFeeUpdated(uint32 oldFee, uint32 newFee);
    event PerformanceFeeUpdated(uint32 oldFee, uint32 newFee);
    event HighWaterMarkUpdated(uint96 oldHWM, uint96 newHWM);
    event ExchangeRateUpdated(uint96 oldRate, uint96 newRate, uint64 currentTime);

    error AccountantPaused();
    error UpdateTooEarly();
    error RateOutOfBounds(uint96 grossRate);
    error NoFeesOwed();
    error UnsupportedQuote(address quote);

    uint256 internal constant DENOMINATOR = 1e6;

    AccountantState internal accountantState;
    PerformanceFeeConfig public performanceFeeConfig;
    MockERC20 public immutable base;
    uint8 public immutable baseDecimals;
    uint256 internal immutable oneShare;

    constructor(
        address _share,
        address _base,
        address payoutAddress,
        uint96 startingExchangeRate,
        uint32 upper,
        uint32 lower,
        uint32 minimumUpdateDelayInSeconds,
        uint32 managementFee,
        uint32 performanceFee
    ) {
        base = MockERC20(_base);
        baseDecimals = MockERC20(_base).decimals();
        oneShare = 10 ** MockERC20(_share).decimals();
        accountantState = AccountantState({
            payoutAddress: payoutAddress,
            feesOwedInBase: 0,
            totalSharesLastUpdate: 0,
            exchangeRate: startingExchangeRate,
            allowedExchangeRateChangeUpper: upper,
            allowedExchangeRateChangeLower: lower,
            lastUpdateTimestamp: uint64(block.timestamp),
            isPaused: false,
            minimumUpdateDelayInSeconds: minimumUpdateDelayInSeconds,
            managementFee: managementFee,
            highWaterMark: startingExchangeRate,
            lastGrossRate: startingExchangeRate,
            clawbackReferenceRate: startingExchangeRate,
            hwmLastUpdateTimestamp: uint64(block.timestamp)
        });
        performanceFeeConfig.performanceFee = performanceFee;
    }

    function getAccountantState() external view returns (AccountantState memory) {
        return accountantState;
    }

    function updateExchangeRate(uint96 grossRate, uint128 totalShareSupplyAcrossChains) external requiresAuth {
        AccountantState storage s = accountantState;
        if (s.isPaused) revert AccountantPaused();
        uint64 currentTime = uint64(block.timestamp);
        if (currentTime < s.lastUpdateTimestamp + s.minimumUpdateDelayInSeconds) revert UpdateTooEarly();
        if (
            uint256(grossRate) > uint256(s.lastGrossRate) * s.allowedExchangeRateChangeUpper / DENOMINATOR
                || uint256(grossRate) < uint256(s.lastGrossRate) * s.allowedExchangeRateChangeLower / DENOMINATOR
        ) revert RateOutOfBounds(grossRate);
        uint256 shares = totalShareSupplyAcrossChains < s.totalSharesLastUpdate
            ? totalShareSupplyAcrossChains
            : s.totalSharesLastUpdate;
        uint256 minRate = grossRate < s.lastGrossRate ? grossRate : s.lastGrossRate;
        uint256 fees =
            shares * minRate / oneShare * s.managementFee / DENOMINATOR * (currentTime - s.lastUpdateTimestamp) / 365 days;
        if (grossRate > s.highWaterMark) {
            fees += shares * (grossRate - s.highWaterMark) / oneShare * performanceFeeConfig.performanceFee / DENOMINATOR;
            emit HighWaterMarkUpdated(s.highWaterMark, grossRate);
            s.highWaterMark = grossRate;
            s.hwmLastUpdateTimestamp = currentTime;
        }
        uint96 net = grossRate;
        if (shares > 0) net = uint96(grossRate - fees * oneShare / shares);
        s.feesOwedInBase += uint128(fees);
        emit ExchangeRateUpdated(s.exchangeRate, net, currentTime);
        s.exchangeRate = net;
        s.lastGrossRate = grossRate;
        s.totalSharesLastUpdate = totalShareSupplyAcrossChains;
        s.lastUpdateTimestamp = currentTime;
    }

    function claimFees(address feeAsset) external requiresAuth {
        uint256 owed = accountantState.feesOwedInBase;
        if (owed == 0) revert NoFeesOwed();
        accountantState.feesOwedInBase = 0;
        emit FeesClaimed(feeAsset, owed);
    }

    function setManagementFee(uint32 fee) external onlyOwner {
        emit ManagementFeeUpdated(accountantState.managementFee, fee);
        accountantState.managementFee = fee;
    }

    function setPerformanceFee(uint32 fee) external onlyOwner {
        emit PerformanceFeeUpdated(performanceFeeConfig.performanceFee, fee);
        performanceFeeConfig.performanceFee = fee;
    }

    function pause() external requiresAuth {
        accountantState.isPaused = true;
        emit Paused();
    }

    function unpause() external requiresAuth {
        accountantState.isPaused = false;
        emit Unpaused();
    }

    function getRate() public view returns (uint256) {
        return accountantState.exchangeRate;
    }

    function getRateSafe() external view returns (uint256) {
        if (accountantState.isPaused) revert AccountantPaused();
        return getRate();
    }

    function getRateInQuote(address quote) public view returns (uint256) {
        if (quote != address(base)) revert UnsupportedQuote(quote);
        return getRate();
    }
}
