// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice Owner plus a set of authorized callers (stands in for solmate Auth + RolesAuthority checks).
abstract contract Owned {
    error Unauthorized(address caller);

    address public owner;
    mapping(address => bool) public isAuthorized;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert Unauthorized(msg.sender);
        _;
    }

    modifier requiresAuth() {
        if (msg.sender != owner && !isAuthorized[msg.sender]) revert Unauthorized(msg.sender);
        _;
    }

    function setAuthorized(address who, bool allowed) external onlyOwner {
        isAuthorized[who] = allowed;
    }
}
