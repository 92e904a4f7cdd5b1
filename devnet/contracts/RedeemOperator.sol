// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {NestVault} from "./NestVault.sol";
import {Owned} from "./Owned.sol";

/// @notice NestVaultRedeemOperator-like keeper: claims fulfilled redemptions for controllers
/// that approved it as their operator; assets go to the controller.
contract RedeemOperator is Owned {
    function redeem(address vault, address controller, uint256 shares) external requiresAuth returns (uint256) {
        return NestVault(vault).redeem(shares, controller, controller);
    }
}
