// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice Global ERC-7540 operator registry (Nest OperatorRegistry): controller => operator => approved.
contract OperatorRegistry {
    event OperatorSet(address indexed controller, address indexed operator, bool approved);

    /// @notice A controller cannot make itself its own operator.
    error CannotSetSelfAsOperator();

    mapping(address => mapping(address => bool)) public operatorEnabled;

    function setOperator(address operator, bool approved) external returns (bool) {
        if (operator == msg.sender) revert CannotSetSelfAsOperator();
        operatorEnabled[msg.sender][operator] = approved;
        emit OperatorSet(msg.sender, operator, approved);
        return true;
    }

    function isOperator(address controller, address operator) external view returns (bool) {
        return operatorEnabled[controller][operator];
    }
}
