// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Accountant} from "./Accountant.sol";
import {BoringVault} from "./BoringVault.sol";
import {MockERC20} from "./MockERC20.sol";
import {OperatorRegistry} from "./OperatorRegistry.sol";
import {Owned} from "./Owned.sol";

/// @notice NestVault-style ERC-7540 async-redeem vault over a BoringVault share (reference section 6).
/// Fees: `flat + gross * rate / 1e6`; requestId is always 0.
contract NestVault is Owned {
    struct Fee {
        uint32 rate;
        uint256 flat;
    }

    struct ClaimableRedeem {
        uint256 assets;
        uint256 shares;
    }

    event Deposit(address indexed caller, address indexed receiver, uint256 assets, uint256 shares);
    event RedeemRequest(
        address indexed controller, address indexed owner, uint256 indexed requestId, address sender, uint256 shares
    );
    event RedeemFulfilled(address indexed controller, uint256 shares, uint256 assets, uint256 actualAssets);
    event InstantRedeem(uint256 shares, uint256 assets, uint256 postFeeAmount, address receiver);
    event Withdraw(
        address indexed caller, address indexed receiver, address indexed controller, uint256 assets, uint256 shares
    );
    event OperatorSet(address indexed controller, address indexed operator, bool approved);
    event SetFee(uint8 indexed f, Fee oldFee, Fee fee);
    event FeeClaimed(uint8 indexed f, address indexed receiver, uint256 amount);

    error NotOperator(address caller, address controller);
    error InsufficientClaimable(uint256 requested, uint256 claimable);

    uint8 internal constant INSTANT_REDEMPTION = 0;
    uint8 internal constant DEPOSIT = 1;
    uint8 internal constant REDEMPTION = 2;

    BoringVault public immutable share;
    MockERC20 public immutable asset;
    Accountant public immutable accountant;
    OperatorRegistry public immutable operatorRegistry;
    uint256 internal immutable oneShare;

    mapping(uint8 => Fee) internal feeOf;
    mapping(uint8 => uint256) public claimableFees;
    mapping(address => uint256) public pendingShares;
    mapping(address => ClaimableRedeem) public claimableRedeem;
    mapping(address => mapping(address => bool)) public isVaultOperator;
    uint256 public totalPendingShares;

    constructor(address _share, address _asset, address _accountant, address _registry) {
        share = BoringVault(_share);
        asset = MockERC20(_asset);
        accountant = Accountant(_accountant);
        operatorRegistry = OperatorRegistry(_registry);
        oneShare = 10 ** BoringVault(_share).decimals();
    }

    function fees(uint8 f) external view returns (Fee memory) {
        return feeOf[f];
    }

    function isOperator(address controller, address operator) public view returns (bool) {
        return isVaultOperator[controller][operator] || operatorRegistry.isOperator(controller, operator);
    }

    function setOperator(address operator, bool approved) external returns (bool) {
        isVaultOperator[msg.sender][operator] = approved;
        emit OperatorSet(msg.sender, operator, approved);
        return true;
    }

    function setFee(uint8 f, Fee calldata fee) external onlyOwner {
        emit SetFee(f, feeOf[f], fee);
        feeOf[f] = fee;
    }

    function claimFees(uint8 f, address receiver) external onlyOwner {
        uint256 amount = claimableFees[f];
        claimableFees[f] = 0;
        asset.transfer(receiver, amount);
        emit FeeClaimed(f, receiver, amount);
    }

    /// @notice Takes the deposit fee in assets, then mints shares for the rest through the share's enter.
    function deposit(uint256 assets, address receiver) external returns (uint256 shares) {
        uint256 fee = _charge(DEPOSIT, assets);
        asset.transferFrom(msg.sender, address(this), assets);
        shares = (assets - fee) * oneShare / accountant.getRate();
        share.enter(address(this), address(asset), 0, receiver, shares);
        emit Deposit(msg.sender, receiver, assets, shares);
    }

    /// @notice Escrows `shares` of `owner_` in the vault as a pending request of `controller`.
    function requestRedeem(uint256 shares, address controller, address owner_) external returns (uint256) {
        _onlyOwnerOrOperator(owner_);
        share.transferFrom(owner_, address(this), shares);
        pendingShares[controller] += shares;
        totalPendingShares += shares;
        emit RedeemRequest(controller, owner_, 0, msg.sender, shares);
        return 0;
    }

    function pendingRedeemRequest(uint256, address controller) external view returns (uint256) {
        return pendingShares[controller];
    }

    function claimableRedeemRequest(uint256, address controller) external view returns (uint256) {
        return claimableRedeem[controller].shares;
    }

    /// @notice Keeper fill at the current rate: burns the escrowed shares, the redemption fee is kept aside.
    function fulfillRedeem(address controller, uint256 shares) external requiresAuth returns (uint256 actualAssets) {
        pendingShares[controller] -= shares;
        totalPendingShares -= shares;
        uint256 assets = shares * accountant.getRate() / oneShare;
        actualAssets = assets - _charge(REDEMPTION, assets);
        share.exit(address(this), address(asset), 0, address(this), shares);
        claimableRedeem[controller].assets += actualAssets;
        claimableRedeem[controller].shares += shares;
        emit RedeemFulfilled(controller, shares, assets, actualAssets);
    }

    /// @notice Claims `shares` of fulfilled redemptions (pro rata of the claimable assets).
    function redeem(uint256 shares, address receiver, address controller) external returns (uint256 assets) {
        _onlyOwnerOrOperator(controller);
        ClaimableRedeem storage c = claimableRedeem[controller];
        if (shares > c.shares) revert InsufficientClaimable(shares, c.shares);
        assets = c.assets * shares / c.shares;
        c.assets -= assets;
        c.shares -= shares;
        asset.transfer(receiver, assets);
        emit Withdraw(msg.sender, receiver, controller, assets, shares);
    }

    /// @notice Burns `shares` of `owner_` and pays their value at once, less the instant-redemption fee.
    function instantRedeem(uint256 shares, address receiver, address owner_) external returns (uint256 postFeeAmount) {
        _onlyOwnerOrOperator(owner_);
        uint256 assets = shares * accountant.getRate() / oneShare;
        postFeeAmount = assets - _charge(INSTANT_REDEMPTION, assets);
        share.exit(receiver, address(asset), 0, owner_, shares);
        asset.transfer(receiver, postFeeAmount);
        emit InstantRedeem(shares, assets, postFeeAmount, receiver);
    }

    function _charge(uint8 f, uint256 gross) internal returns (uint256 fee) {
        fee = feeOf[f].flat + gross * feeOf[f].rate / 1e6;
        claimableFees[f] += fee;
    }

    function _onlyOwnerOrOperator(address controller) internal view {
        if (msg.sender != controller && !isOperator(controller, msg.sender)) {
            revert NotOperator(msg.sender, controller);
        }
    }
}
