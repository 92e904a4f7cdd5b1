// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {MockERC20} from "./MockERC20.sol";
import {Owned} from "./Owned.sol";

/// @notice BoringVault share token: ERC20 plus enter/exit (reference section 1).
contract BoringVault is MockERC20, Owned {
    event Enter(address indexed from, address indexed asset, uint256 amount, address indexed to, uint256 shares);
    event Exit(address indexed to, address indexed asset, uint256 amount, address indexed from, uint256 shares);

    constructor(string memory _name, string memory _symbol, uint8 _decimals) MockERC20(_name, _symbol, _decimals) {}

    /// @notice Pulls `assetAmount` of `asset` from `from` and mints `shareAmount` shares to `to`.
    function enter(address from, address asset, uint256 assetAmount, address to, uint256 shareAmount)
        external
        requiresAuth
    {
        if (assetAmount > 0) MockERC20(asset).transferFrom(from, address(this), assetAmount);
        _mint(to, shareAmount);
        emit Enter(from, asset, assetAmount, to, shareAmount);
    }

    /// @notice Burns `shareAmount` shares of `from` and sends `assetAmount` of `asset` to `to`.
    function exit(address to, address asset, uint256 assetAmount, address from, uint256 shareAmount)
        external
        requiresAuth
    {
        _burn(from, shareAmount);
        if (assetAmount > 0) MockERC20(asset).transfer(to, assetAmount);
        emit Exit(to, asset, assetAmount, from, shareAmount);
    }

    /// @notice The strategist's call from the vault (reference section 1, `manage(address,bytes,uint256)`).
    function manage(address target, bytes calldata data, uint256 value)
        external
        requiresAuth
        returns (bytes memory result)
    {
        bool ok;
        (ok, result) = target.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }
}
