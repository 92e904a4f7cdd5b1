// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Accountant} from "./Accountant.sol";
import {BoringVault} from "./BoringVault.sol";
import {MockERC20} from "./MockERC20.sol";
import {OperatorRegistry} from "./OperatorRegistry.sol";
import {Owned} from "./Owned.sol";

/// @notice NestVault-style ERC-7540 async-redeem vault over a BoringVault share (reference section 6),
/// with the redeem rules of Nest's NestVaultRedeemLogic: a controller's requests add up into one
/// pending amount, a fulfilment moves part or all of it to claimable (shares and the assets after
/// the redemption fee), `updateRedeem` lowers what is pending and returns the difference, and
/// `redeem`/`withdraw` claim part or all of what is claimable (by the controller or its operator).
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
    event RedeemUpdated(address controller, address receiver, address caller, uint256 oldShares, uint256 newShares);
    event InstantRedeem(uint256 shares, uint256 assets, uint256 postFeeAmount, address receiver);
    event Withdraw(
        address indexed caller, address indexed receiver, address indexed controller, uint256 assets, uint256 shares
    );
    event OperatorSet(address indexed controller, address indexed operator, bool approved);
    event SetFee(uint8 indexed f, Fee oldFee, Fee fee);
    event FeeClaimed(uint8 indexed f, address indexed receiver, uint256 amount);

    error NotOperator(address caller, address controller);
    error InsufficientClaimable(uint256 requested, uint256 claimable);
    error NoPendingRedeem(address controller);
    error InsufficientPending(uint256 requested, uint256 pending);
    error ZeroAmount();
    error ZeroPayout();

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

    /// @notice Escrows `shares` of `owner_` in the vault, added to the pending request of `controller`.
    function requestRedeem(uint256 shares, address controller, address owner_) external returns (uint256) {
        _onlyOwnerOrOperator(owner_);
        if (shares == 0) revert ZeroAmount();
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

    /// @notice The assets `controller` can claim now (ERC-4626 maxWithdraw).
    function maxWithdraw(address controller) external view returns (uint256) {
        return claimableRedeem[controller].assets;
    }

    /// @notice Keeper fill of `shares` of the controller's pending request (all or part) at the current
    /// rate: burns the escrowed shares; the assets less the redemption fee become claimable.
    function fulfillRedeem(address controller, uint256 shares) external requiresAuth returns (uint256 actualAssets) {
        uint256 pending = pendingShares[controller];
        if (pending == 0) revert NoPendingRedeem(controller);
        if (shares > pending) revert InsufficientPending(shares, pending);
        uint256 assets = shares * accountant.getRate() / oneShare;
        if (assets == 0) revert ZeroPayout();
        actualAssets = assets - _charge(REDEMPTION, assets);
        if (actualAssets == 0) revert ZeroPayout();
        pendingShares[controller] = pending - shares;
        totalPendingShares -= shares;
        share.exit(address(this), address(asset), 0, address(this), shares);
        claimableRedeem[controller].assets += actualAssets;
        claimableRedeem[controller].shares += shares;
        emit RedeemFulfilled(controller, shares, assets, actualAssets);
    }

    /// @notice Lowers the controller's pending request to `newShares` (never raises it) and returns the
    /// difference to `receiver`; by the controller or its operator.
    function updateRedeem(uint256 newShares, address controller, address receiver) external {
        _onlyOwnerOrOperator(controller);
        uint256 oldShares = pendingShares[controller];
        if (oldShares == 0) revert NoPendingRedeem(controller);
        if (newShares > oldShares) revert InsufficientPending(newShares, oldShares);
        if (newShares == oldShares) return;
        uint256 returned = oldShares - newShares;
        totalPendingShares -= returned;
        pendingShares[controller] = newShares;
        share.transfer(receiver, returned);
        emit RedeemUpdated(controller, receiver, msg.sender, oldShares, newShares);
    }

    /// @notice Claims `shares` of the fulfilled redemptions: all of the claimable assets for all of the
    /// shares, else their pro-rata part (rounded down).
    function redeem(uint256 shares, address receiver, address controller) external returns (uint256 assets) {
        _onlyOwnerOrOperator(controller);
        if (shares == 0) revert ZeroAmount();
        ClaimableRedeem storage c = claimableRedeem[controller];
        if (shares > c.shares) revert InsufficientClaimable(shares, c.shares);
        if (shares == c.shares) {
            assets = c.assets;
            c.assets = 0;
            c.shares = 0;
        } else {
            assets = shares * c.assets / c.shares;
            if (assets == 0) revert ZeroPayout();
            c.assets -= assets;
            c.shares -= shares;
        }
        asset.transfer(receiver, assets);
        emit Withdraw(msg.sender, receiver, controller, assets, shares);
    }

    /// @notice Claims `assets` of the fulfilled redemptions; the shares they stand for are their
    /// pro-rata part (rounded down), all of them for all of the assets.
    function withdraw(uint256 assets, address receiver, address controller) external returns (uint256 shares) {
        _onlyOwnerOrOperator(controller);
        if (assets == 0) revert ZeroAmount();
        ClaimableRedeem storage c = claimableRedeem[controller];
        if (assets > c.assets) revert InsufficientClaimable(assets, c.assets);
        shares = assets * c.shares / c.assets;
        if (assets == c.assets) {
            c.assets = 0;
            c.shares = 0;
        } else {
            if (shares == 0) revert ZeroPayout();
            c.assets -= assets;
            c.shares -= shares;
        }
        asset.transfer(receiver, assets);
        emit Withdraw(msg.sender, receiver, controller, assets, shares);
    }

    /// @notice Takes `shares` of `owner_` into the vault, burns them and pays their value at once less
    /// the instant-redemption fee, which goes to the share (it stays with the holders, not claimable).
    function instantRedeem(uint256 shares, address receiver, address owner_) external returns (uint256 postFeeAmount) {
        _onlyOwnerOrOperator(owner_);
        if (shares == 0) revert ZeroAmount();
        share.transferFrom(owner_, address(this), shares);
        uint256 assets = shares * accountant.getRate() / oneShare;
        uint256 fee = feeOf[INSTANT_REDEMPTION].flat + assets * feeOf[INSTANT_REDEMPTION].rate / 1e6;
        postFeeAmount = assets - fee;
        if (postFeeAmount == 0) revert ZeroPayout();
        share.exit(address(this), address(asset), 0, address(this), shares);
        asset.transfer(receiver, postFeeAmount);
        if (fee > 0) asset.transfer(address(share), fee);
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
