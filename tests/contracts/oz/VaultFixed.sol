// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// Vault.sol's vault as its author fixes it after a failed deposit: the allowance checked
/// first, with an error saying what is missing. Built alone, as a fixed build would be, for
/// `--code-override` of the deployed vault (its `asset` immutable copied from the chain).
contract Vault {
    using SafeERC20 for IERC20;

    error NotApproved(uint256 allowance, uint256 assets);

    IERC20 public immutable asset;
    mapping(address => uint256) public shares;

    constructor(IERC20 asset_) {
        asset = asset_;
    }

    function deposit(uint256 assets) external {
        uint256 allowed = asset.allowance(msg.sender, address(this));
        if (allowed < assets) revert NotApproved(allowed, assets);
        asset.safeTransferFrom(msg.sender, address(this), assets);
        shares[msg.sender] += assets;
    }

    function withdraw(uint256 assets) external {
        shares[msg.sender] -= assets;
        asset.safeTransfer(msg.sender, assets);
    }
}
