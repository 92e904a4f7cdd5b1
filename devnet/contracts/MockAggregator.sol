// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Owned} from "./Owned.sol";

/// @notice Chainlink-style price feed (AggregatorV3Interface views): the owner posts answers.
contract MockAggregator is Owned {
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;
    uint80 internal round;
    int256 internal answer;
    uint256 internal updatedAt;

    constructor(uint8 _decimals, string memory _description, int256 initialAnswer) {
        decimals = _decimals;
        description = _description;
        _post(initialAnswer);
    }

    function updateAnswer(int256 newAnswer) external requiresAuth {
        _post(newAnswer);
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (round, answer, updatedAt, updatedAt, round);
    }

    function latestAnswer() external view returns (int256) {
        return answer;
    }

    function _post(int256 a) internal {
        round++;
        answer = a;
        updatedAt = block.timestamp;
        emit AnswerUpdated(a, round, block.timestamp);
    }
}
