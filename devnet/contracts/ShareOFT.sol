// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";
import {Owned} from "./Owned.sol";

/// @notice LayerZero OFT adapter stand-in for a share token: `send` locks shares and emits OFTSent,
/// `lzReceive` (the endpoint's delivery, here the owner) unlocks them and emits OFTReceived.
contract ShareOFT is Owned {
    event OFTSent(
        bytes32 indexed guid, uint32 dstEid, address indexed fromAddress, uint256 amountSentLD, uint256 amountReceivedLD
    );
    event OFTReceived(bytes32 indexed guid, uint32 srcEid, address indexed toAddress, uint256 amountReceivedLD);

    MockERC20 public immutable token;
    uint64 public outboundNonce;

    constructor(address _token) {
        token = MockERC20(_token);
    }

    /// @notice The guid is derived from this chain, the nonce and the route, like an LZ packet guid.
    function send(uint32 dstEid, bytes32 to, uint256 amountLD) external returns (bytes32 guid) {
        guid = keccak256(abi.encodePacked(++outboundNonce, block.chainid, address(this), dstEid, to));
        token.transferFrom(msg.sender, address(this), amountLD);
        emit OFTSent(guid, dstEid, msg.sender, amountLD, amountLD);
    }

    function lzReceive(bytes32 guid, uint32 srcEid, address to, uint256 amountLD) external requiresAuth {
        token.transfer(to, amountLD);
        emit OFTReceived(guid, srcEid, to, amountLD);
    }
}
