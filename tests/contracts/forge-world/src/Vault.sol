// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

/// An ERC4626 vault over an Asset. Its admin (the deployer) grants KEEPER, whose holders may
/// harvest, and may pause deposits.
contract Vault is ERC4626, AccessControl {
    bytes32 public constant KEEPER = keccak256("KEEPER");

    uint64 public harvests;
    bool public paused;

    event Harvested(address indexed keeper, uint64 harvests);
    event PausedSet(bool paused);

    constructor(IERC20 asset_) ERC20("Vault share", "vAST") ERC4626(asset_) {
        _grantRole(DEFAULT_ADMIN_ROLE, msg.sender);
    }

    function harvest() external onlyRole(KEEPER) {
        harvests += 1;
        emit Harvested(msg.sender, harvests);
    }

    function setPaused(bool p) external onlyRole(DEFAULT_ADMIN_ROLE) {
        paused = p;
        emit PausedSet(p);
    }

    /// Nothing may be deposited while paused: deposit and mint revert with ERC4626's
    /// ERC4626ExceededMaxDeposit / ERC4626ExceededMaxMint.
    function maxDeposit(address receiver) public view override returns (uint256) {
        return paused ? 0 : super.maxDeposit(receiver);
    }

    function maxMint(address receiver) public view override returns (uint256) {
        return paused ? 0 : super.maxMint(receiver);
    }
}
