// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";
import {NestVault} from "./NestVault.sol";
import {Owned} from "./Owned.sol";
import {ShareOFT} from "./ShareOFT.sol";

/// @notice NestVaultComposer-like: deposits relayed USDC into the NestVault and sends the shares
/// cross-chain through the share OFT (reference sections 6 and 9).
contract Composer is Owned {
    event Deposited(bytes32 sender, bytes32 recipient, uint32 dstEid, uint256 assetAmt, uint256 shareAmt);
    event Sent(bytes32 indexed guid);
    event Refunded(bytes32 indexed guid);

    NestVault public immutable vault;
    ShareOFT public immutable oft;

    constructor(address _vault, address _oft) {
        vault = NestVault(_vault);
        oft = ShareOFT(_oft);
    }

    /// @notice Pulls `assetAmount` from the caller (the relayer), deposits it and sends the shares to `to` on `dstEid`.
    function depositAndSend(bytes32 depositor, uint256 assetAmount, uint32 dstEid, bytes32 to)
        external
        requiresAuth
        returns (bytes32 guid)
    {
        MockERC20 asset = vault.asset();
        asset.transferFrom(msg.sender, address(this), assetAmount);
        asset.approve(address(vault), assetAmount);
        uint256 shares = vault.deposit(assetAmount, address(this));
        emit Deposited(depositor, to, dstEid, assetAmount, shares);
        vault.share().approve(address(oft), shares);
        guid = oft.send(dstEid, to, shares);
        emit Sent(guid);
    }

    /// @notice A compose that cannot complete: the devnet only reports it.
    function refund(bytes32 guid) external requiresAuth {
        emit Refunded(guid);
    }
}

/// @notice NestCCTPRelayer-like: the CCTP mint (USDC minted to the relayer) then the composer hook.
contract Relayer is Owned {
    event HookRelayed(bytes32 nonce);
    event HookFailed(bytes32 nonce);
    event Refunded(bytes32 nonce);

    Composer public immutable composer;

    constructor(address _composer) {
        composer = Composer(_composer);
    }

    /// @notice Stands in for `relay(message, attestation, data, forceRefund)`: mints `amount` USDC as the
    /// message transmitter would, then runs the hook unless `forceRefund`, which refunds (HookFailed + Refunded).
    function relay(bytes32 nonce, uint256 amount, uint32 dstEid, bytes32 recipient, bool forceRefund)
        external
        requiresAuth
    {
        MockUSDCLike usdc = MockUSDCLike(address(composer.vault().asset()));
        usdc.mint(address(this), amount);
        if (forceRefund) {
            emit HookFailed(nonce);
            emit Refunded(nonce);
            return;
        }
        usdc.approve(address(composer), amount);
        composer.depositAndSend(recipient, amount, dstEid, recipient);
        emit HookRelayed(nonce);
    }
}

interface MockUSDCLike {
    function mint(address to, uint256 amount) external;
    function approve(address spender, uint256 amount) external returns (bool);
}
