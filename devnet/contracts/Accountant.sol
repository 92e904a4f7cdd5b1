// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";
import {Owned} from "./Owned.sol";

/// @notice Legacy AccountantWithRateProviders, Nucleus field order (reference section 3).
contract Accountant is Owned {
    struct AccountantState {
        address payoutAddress;
        uint128 feesOwedInBase;
        uint128 totalSharesLastUpdate;
        uint96 exchangeRate;
        uint16 allowedExchangeRateChangeUpper;
        uint16 allowedExchangeRateChangeLower;
        uint64 lastUpdateTimestamp;
        bool isPaused;
        uint32 minimumUpdateDelayInSeconds;
        uint16 managementFee;
    }

    event ExchangeRateUpdated(uint96 oldRate, uint96 newRate, uint64 currentTime);
    event FeesClaimed(address indexed feeAsset, uint256 amount);
    event ManagementFeeUpdated(uint16 oldFee, uint16 newFee);
    event PlatformFeeUpdated(uint16 oldFee, uint16 newFee);
    event Paused();
    event Unpaused();

    error AccountantPaused();
    error NoFeesOwed();
    error UnsupportedQuote(address quote);

    AccountantState public accountantState;
    /// @notice Veda's name for the yearly fee, kept beside the Nucleus state (emits PlatformFeeUpdated).
    uint16 public platformFee;
    MockERC20 public immutable vault;
    MockERC20 public immutable base;
    uint8 public immutable decimals;
    uint256 internal immutable oneShare;

    constructor(
        address _vault,
        address _base,
        address payoutAddress,
        uint96 startingExchangeRate,
        uint16 upper,
        uint16 lower,
        uint32 minimumUpdateDelayInSeconds,
        uint16 managementFee
    ) {
        vault = MockERC20(_vault);
        base = MockERC20(_base);
        decimals = MockERC20(_base).decimals();
        oneShare = 10 ** MockERC20(_vault).decimals();
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
            managementFee: managementFee
        });
    }

    /// @notice Like the legacy contract: out of bounds or too early pauses silently (no Paused event),
    /// stores the rate anyway and accrues no fee on that path.
    function updateExchangeRate(uint96 newExchangeRate) external requiresAuth {
        AccountantState storage state = accountantState;
        if (state.isPaused) revert AccountantPaused();
        uint64 currentTime = uint64(block.timestamp);
        uint96 currentExchangeRate = state.exchangeRate;
        uint256 currentTotalShares = vault.totalSupply();
        if (
            currentTime < state.lastUpdateTimestamp + state.minimumUpdateDelayInSeconds
                || uint256(newExchangeRate) > uint256(currentExchangeRate) * state.allowedExchangeRateChangeUpper / 1e4
                || uint256(newExchangeRate) < uint256(currentExchangeRate) * state.allowedExchangeRateChangeLower / 1e4
        ) {
            state.isPaused = true;
        } else {
            uint256 shares = currentTotalShares < state.totalSharesLastUpdate
                ? currentTotalShares
                : state.totalSharesLastUpdate;
            uint256 rate = newExchangeRate < currentExchangeRate ? newExchangeRate : currentExchangeRate;
            uint256 annual = shares * rate / oneShare * state.managementFee / 1e4;
            state.feesOwedInBase += uint128(annual * (currentTime - state.lastUpdateTimestamp) / 365 days);
        }
        state.exchangeRate = newExchangeRate;
        state.totalSharesLastUpdate = uint128(currentTotalShares);
        state.lastUpdateTimestamp = currentTime;
        emit ExchangeRateUpdated(currentExchangeRate, newExchangeRate, currentTime);
    }

    /// @notice Zeroes the fees owed and reports them; the devnet moves no fee tokens.
    function claimFees(address feeAsset) external requiresAuth {
        uint256 owed = accountantState.feesOwedInBase;
        if (owed == 0) revert NoFeesOwed();
        accountantState.feesOwedInBase = 0;
        emit FeesClaimed(feeAsset, owed);
    }

    function updateManagementFee(uint16 fee) external onlyOwner {
        emit ManagementFeeUpdated(accountantState.managementFee, fee);
        accountantState.managementFee = fee;
    }

    function updatePlatformFee(uint16 fee) external onlyOwner {
        emit PlatformFeeUpdated(platformFee, fee);
        platformFee = fee;
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

    /// @notice Only the base asset is priced on the devnet.
    function getRateInQuote(address quote) public view returns (uint256) {
        if (quote != address(base)) revert UnsupportedQuote(quote);
        return getRate();
    }
}
