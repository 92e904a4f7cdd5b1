// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";
import {Owned} from "./Owned.sol";

/// @notice Nest hub accountant (reference section 6): `getAccountantState()` with the hub's 14-field struct,
/// fees and bounds in 1e6 = 100%, `updateExchangeRate(grossRate, totalShareSupply)` that reverts when too
/// early or out of bounds and stores the net rate. The fee arithmetic is Nest's (`_accrueManagementFees`,
/// `_accruePerformanceFees`), rounding down at the same steps; the simulator mirrors it exactly:
///   management: haircut = min(lastGrossRate, grossRate) * managementFee * dt / (1e6 * 365 days)
///                         * min(totalSharesLastUpdate, totalShareSupply) / totalShareSupply
///               fee = haircut * totalShareSupply / oneShare
///   performance: hurdle-adjusted HWM = hwm + hwm * hurdleRate * (now - hwmLastUpdateTimestamp) / (1e6 * 365 days);
///               above it, fee = (grossRate - that) * totalShareSupply / oneShare * performanceFee / 1e6,
///               and the HWM moves to grossRate
///   net rate = grossRate - haircut - fee * oneShare / totalShareSupply, bounded against the current net rate.
/// So with totalSharesLastUpdate 0 the management fee is 0 while a performance fee is still charged on the
/// whole supply. Not modelled: the holdback reserve and its clawback (holdbackRate stays 0 here).
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
    event HurdleRateUpdated(uint32 oldRate, uint32 newRate);
    event ExchangeRateUpdated(uint96 oldRate, uint96 newRate, uint64 currentTime);

    error AccountantPaused();
    error TotalSupplyBelowLocal();
    error UpdateTooEarly();
    error RateOutOfBounds(uint96 grossRate);
    error NoFeesOwed();
    error UnsupportedQuote(address quote);

    uint256 internal constant DENOMINATOR = 1e6;
    uint256 internal constant YEAR = 365 days;

    AccountantState internal accountantState;
    PerformanceFeeConfig public performanceFeeConfig;
    MockERC20 public immutable base;
    address internal immutable share;
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
        share = _share;
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

    function updateExchangeRate(uint96 grossRate, uint128 totalShareSupply) external requiresAuth {
        AccountantState storage s = accountantState;
        uint64 currentTime = uint64(block.timestamp);
        if (totalShareSupply < MockERC20(share).totalSupply()) revert TotalSupplyBelowLocal();
        if (currentTime < s.lastUpdateTimestamp + s.minimumUpdateDelayInSeconds) revert UpdateTooEarly();
        uint256 current = s.exchangeRate;
        uint256 postManagement = _accrueManagementFee(grossRate, totalShareSupply);
        uint256 postFee = _accruePerformanceFee(grossRate, postManagement, totalShareSupply, currentTime);
        if (
            postFee > current * s.allowedExchangeRateChangeUpper / DENOMINATOR
                || postFee < current * s.allowedExchangeRateChangeLower / DENOMINATOR
        ) revert RateOutOfBounds(grossRate);
        s.exchangeRate = uint96(postFee);
        s.lastGrossRate = grossRate;
        s.totalSharesLastUpdate = totalShareSupply;
        s.lastUpdateTimestamp = currentTime;
        emit ExchangeRateUpdated(uint96(current), uint96(postFee), currentTime);
    }

    /// @dev Management fee: on min(totalSharesLastUpdate, supply), over the time since the last update.
    function _accrueManagementFee(uint256 grossRate, uint256 total) internal returns (uint256 postManagement) {
        postManagement = grossRate;
        if (total == 0) return postManagement;
        AccountantState storage s = accountantState;
        uint256 basis = grossRate < s.lastGrossRate ? grossRate : s.lastGrossRate;
        uint256 discount = basis * s.managementFee * (block.timestamp - s.lastUpdateTimestamp) / (DENOMINATOR * YEAR);
        uint256 shareBasis = s.totalSharesLastUpdate < total ? s.totalSharesLastUpdate : total;
        uint256 haircut = discount * shareBasis / total;
        postManagement = grossRate > haircut ? grossRate - haircut : 0;
        s.feesOwedInBase += uint128(haircut * total / oneShare);
    }

    /// @dev Performance fee: on the gain above the hurdle-adjusted high-water mark, on the whole supply.
    function _accruePerformanceFee(uint256 grossRate, uint256 postManagement, uint256 total, uint64 currentTime)
        internal
        returns (uint256 postFee)
    {
        AccountantState storage s = accountantState;
        postFee = postManagement;
        uint256 hwm = s.highWaterMark;
        uint256 hurdleHwm = hwm
            + uint256(performanceFeeConfig.hurdleRate) * hwm * (currentTime - s.hwmLastUpdateTimestamp) / (DENOMINATOR * YEAR);
        if (performanceFeeConfig.performanceFee == 0 || grossRate <= hurdleHwm) return postFee;
        uint256 performance =
            (grossRate - hurdleHwm) * total / oneShare * performanceFeeConfig.performanceFee / DENOMINATOR;
        s.highWaterMark = uint96(grossRate);
        s.hwmLastUpdateTimestamp = currentTime;
        if (performance > 0 && total > 0) {
            uint256 perShare = performance * oneShare / total;
            postFee = postManagement > perShare ? postManagement - perShare : 0;
            s.feesOwedInBase += uint128(performance);
        }
        s.clawbackReferenceRate = uint96(postFee);
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

    /// @notice Nest's `updateHurdleRate`: the hurdle accrued under the old rate moves into the HWM first.
    function setHurdleRate(uint32 rate) external onlyOwner {
        AccountantState storage s = accountantState;
        uint64 currentTime = uint64(block.timestamp);
        uint256 old = performanceFeeConfig.hurdleRate;
        if (old > 0) {
            uint256 hwm = s.highWaterMark;
            s.highWaterMark = uint96(hwm + old * hwm * (currentTime - s.hwmLastUpdateTimestamp) / (DENOMINATOR * YEAR));
        }
        s.hwmLastUpdateTimestamp = currentTime;
        emit HurdleRateUpdated(uint32(old), rate);
        performanceFeeConfig.hurdleRate = rate;
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
