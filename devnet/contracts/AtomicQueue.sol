// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";

/// @notice AtomicQueue core (reference section 4): one request per (user, offer, want), whole fills only.
/// The two variants differ only in which event parameters are indexed.
abstract contract AtomicQueueBase {
    struct AtomicRequest {
        uint64 deadline;
        uint88 atomicPrice;
        uint96 offerAmount;
        bool inSolve;
    }

    error RequestDeadlineExceeded(address user);
    error ZeroOfferAmount(address user);

    mapping(address => mapping(address => mapping(address => AtomicRequest))) public userAtomicRequest;

    function getUserAtomicRequest(address user, address offer, address want)
        external
        view
        returns (AtomicRequest memory)
    {
        return userAtomicRequest[user][offer][want];
    }

    /// @notice Overwrites the caller's request; an amount of 0 cancels it.
    function updateAtomicRequest(address offer, address want, AtomicRequest memory userRequest) external {
        AtomicRequest storage request = userAtomicRequest[msg.sender][offer][want];
        request.deadline = userRequest.deadline;
        request.atomicPrice = userRequest.atomicPrice;
        request.offerAmount = userRequest.offerAmount;
        _emitUpdated(
            msg.sender, offer, want, userRequest.offerAmount, userRequest.deadline, userRequest.atomicPrice, block.timestamp
        );
    }

    /// @notice Fills every user's whole request: shares go to `solver`, who pays each user
    /// `atomicPrice * offerAmount / 10**offerDecimals` of `want`. Any expired or empty request reverts the batch.
    function solve(address offer, address want, address[] calldata users, bytes calldata, address solver) external {
        uint256 offerUnit = 10 ** MockERC20(offer).decimals();
        for (uint256 i = 0; i < users.length; ++i) {
            AtomicRequest storage request = userAtomicRequest[users[i]][offer][want];
            if (block.timestamp > request.deadline) revert RequestDeadlineExceeded(users[i]);
            if (request.offerAmount == 0) revert ZeroOfferAmount(users[i]);
            uint256 offerAmount = request.offerAmount;
            uint256 wantAmount = uint256(request.atomicPrice) * offerAmount / offerUnit;
            request.offerAmount = 0;
            MockERC20(offer).transferFrom(users[i], solver, offerAmount);
            MockERC20(want).transferFrom(solver, users[i], wantAmount);
            _emitFulfilled(users[i], offer, want, offerAmount, wantAmount, block.timestamp);
        }
    }

    function _emitUpdated(
        address user,
        address offer,
        address want,
        uint256 amount,
        uint256 deadline,
        uint256 minPrice,
        uint256 timestamp
    ) internal virtual;

    function _emitFulfilled(
        address user,
        address offer,
        address want,
        uint256 offerSpent,
        uint256 wantReceived,
        uint256 timestamp
    ) internal virtual;
}

/// @notice Veda AtomicQueue: user, offerToken and wantToken indexed.
contract AtomicQueueVeda is AtomicQueueBase {
    event AtomicRequestUpdated(
        address indexed user,
        address indexed offerToken,
        address indexed wantToken,
        uint256 amount,
        uint256 deadline,
        uint256 minPrice,
        uint256 timestamp
    );
    event AtomicRequestFulfilled(
        address indexed user,
        address indexed offerToken,
        address indexed wantToken,
        uint256 offerAmountSpent,
        uint256 wantAmountReceived,
        uint256 timestamp
    );

    function _emitUpdated(address u, address o, address w, uint256 a, uint256 d, uint256 p, uint256 t)
        internal
        override
    {
        emit AtomicRequestUpdated(u, o, w, a, d, p, t);
    }

    function _emitFulfilled(address u, address o, address w, uint256 s, uint256 r, uint256 t) internal override {
        emit AtomicRequestFulfilled(u, o, w, s, r, t);
    }
}

/// @notice Nucleus AtomicQueue: the same events with nothing indexed.
contract AtomicQueueNucleus is AtomicQueueBase {
    event AtomicRequestUpdated(
        address user,
        address offerToken,
        address wantToken,
        uint256 amount,
        uint256 deadline,
        uint256 minPrice,
        uint256 timestamp
    );
    event AtomicRequestFulfilled(
        address user,
        address offerToken,
        address wantToken,
        uint256 offerAmountSpent,
        uint256 wantAmountReceived,
        uint256 timestamp
    );

    function _emitUpdated(address u, address o, address w, uint256 a, uint256 d, uint256 p, uint256 t)
        internal
        override
    {
        emit AtomicRequestUpdated(u, o, w, a, d, p, t);
    }

    function _emitFulfilled(address u, address o, address w, uint256 s, uint256 r, uint256 t) internal override {
        emit AtomicRequestFulfilled(u, o, w, s, r, t);
    }
}
