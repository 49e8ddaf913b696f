// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// A token and a vault pulling it through OpenZeppelin's SafeERC20: a transfer the token
/// refuses is passed on by SafeERC20's assembly, a frame whose failure is a call it made.
contract Coin is ERC20 {
    constructor(uint256 supply) ERC20("Coin", "COIN") {
        _mint(msg.sender, supply);
    }
}

contract Vault {
    using SafeERC20 for IERC20;

    IERC20 public immutable asset;
    mapping(address => uint256) public shares;

    constructor(IERC20 asset_) {
        asset = asset_;
    }

    function deposit(uint256 assets) external {
        asset.safeTransferFrom(msg.sender, address(this), assets);
        shares[msg.sender] += assets;
    }

    function withdraw(uint256 assets) external {
        shares[msg.sender] -= assets;
        asset.safeTransfer(msg.sender, assets);
    }
}
