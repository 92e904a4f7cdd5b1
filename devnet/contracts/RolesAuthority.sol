// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Owned} from "./Owned.sol";

/// @notice solmate RolesAuthority, user roles only (reference section 7).
contract RolesAuthority is Owned {
    event UserRoleUpdated(address indexed user, uint8 indexed role, bool enabled);

    mapping(address => bytes32) public getUserRoles;

    function doesUserHaveRole(address user, uint8 role) external view returns (bool) {
        return (uint256(getUserRoles[user]) >> role) & 1 != 0;
    }

    function setUserRole(address user, uint8 role, bool enabled) external requiresAuth {
        if (enabled) getUserRoles[user] |= bytes32(1 << role);
        else getUserRoles[user] &= ~bytes32(1 << role);
        emit UserRoleUpdated(user, role, enabled);
    }
}
