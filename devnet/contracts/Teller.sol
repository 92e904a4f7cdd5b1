// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Accountant} from "./Accountant.sol";
import {BoringVault} from "./BoringVault.sol";
import {Owned} from "./Owned.sol";

/// @notice TellerWithMultiAssetSupport core; the two ABI families differ only in their Deposit event.
abstract contract TellerBase is Owned {
    event BulkDeposit(address indexed asset, uint256 depositAmount);
    event BulkWithdraw(address indexed asset, uint256 shareAmount);

    error MinimumNotMet(uint256 got, uint256 minimum);

    BoringVault public immutable vault;
    Accountant public immutable accountant;
    uint256 internal immutable oneShare;
    uint256 public depositNonce;
    uint64 public shareLockPeriod;

    constructor(address _vault, address _accountant) {
        vault = BoringVault(_vault);
        accountant = Accountant(_accountant);
        oneShare = 10 ** BoringVault(_vault).decimals();
    }

    function deposit(address depositAsset, uint256 depositAmount, uint256 minimumMint)
        external
        returns (uint256 shares)
    {
        shares = _enter(msg.sender, depositAsset, depositAmount, minimumMint, msg.sender);
        _emitDeposit(depositNonce++, msg.sender, depositAsset, depositAmount, shares);
    }

    function bulkDeposit(address depositAsset, uint256 depositAmount, uint256 minimumMint, address to)
        external
        requiresAuth
        returns (uint256 shares)
    {
        shares = _enter(msg.sender, depositAsset, depositAmount, minimumMint, to);
        emit BulkDeposit(depositAsset, depositAmount);
    }

    function bulkWithdraw(address withdrawAsset, uint256 shareAmount, uint256 minimumAssets, address to)
        external
        requiresAuth
        returns (uint256 assetsOut)
    {
        assetsOut = shareAmount * accountant.getRateInQuote(withdrawAsset) / oneShare;
        if (assetsOut < minimumAssets) revert MinimumNotMet(assetsOut, minimumAssets);
        vault.exit(to, withdrawAsset, assetsOut, msg.sender, shareAmount);
        emit BulkWithdraw(withdrawAsset, shareAmount);
    }

    function _enter(address from, address asset, uint256 amount, uint256 minimumMint, address to)
        internal
        returns (uint256 shares)
    {
        shares = amount * oneShare / accountant.getRateInQuote(asset);
        if (shares < minimumMint) revert MinimumNotMet(shares, minimumMint);
        vault.enter(from, asset, amount, to, shares);
    }

    function _emitDeposit(uint256 nonce, address receiver, address asset, uint256 amount, uint256 shares)
        internal
        virtual;
}

/// @notice Veda teller: Deposit has 8 parameters, nonce not indexed, referral indexed.
contract TellerVeda is TellerBase {
    event Deposit(
        uint256 nonce,
        address indexed receiver,
        address indexed depositAsset,
        uint256 depositAmount,
        uint256 shareAmount,
        uint256 depositTimestamp,
        uint256 shareLockPeriodAtTimeOfDeposit,
        address indexed referralAddress
    );

    constructor(address _vault, address _accountant) TellerBase(_vault, _accountant) {}

    function _emitDeposit(uint256 nonce, address receiver, address asset, uint256 amount, uint256 shares)
        internal
        override
    {
        emit Deposit(nonce, receiver, asset, amount, shares, block.timestamp, shareLockPeriod, address(0));
    }
}

/// @notice Nucleus/Plume teller: Deposit has 7 parameters, nonce indexed, no referral.
contract TellerNucleus is TellerBase {
    event Deposit(
        uint256 indexed nonce,
        address indexed receiver,
        address indexed depositAsset,
        uint256 depositAmount,
        uint256 shareAmount,
        uint256 depositTimestamp,
        uint256 shareLockPeriodAtTimeOfDeposit
    );

    constructor(address _vault, address _accountant) TellerBase(_vault, _accountant) {}

    function _emitDeposit(uint256 nonce, address receiver, address asset, uint256 amount, uint256 shares)
        internal
        override
    {
        emit Deposit(nonce, receiver, asset, amount, shares, block.timestamp, shareLockPeriod);
    }
}
