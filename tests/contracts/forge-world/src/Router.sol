// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Vault} from "./Vault.sol";
import {Ledger} from "./Ledger.sol";

/// One call from asset to vault shares, recorded in the Ledger: `zap` pulls the caller's asset
/// (they approve the Router first), deposits it into the Vault for them and credits them the
/// shares in the Ledger (through its proxy; the Ledger's owner makes the Router its router).
contract Router {
    using SafeERC20 for IERC20;

    IERC20 public immutable asset;
    Vault public immutable vault;
    Ledger public immutable ledger;

    event Zapped(address indexed account, uint256 assets, uint256 shares);

    constructor(IERC20 asset_, Vault vault_, Ledger ledger_) {
        asset = asset_;
        vault = vault_;
        ledger = ledger_;
    }

    function zap(uint256 assets) external returns (uint256 shares) {
        asset.safeTransferFrom(msg.sender, address(this), assets);
        asset.forceApprove(address(vault), assets);
        shares = vault.deposit(assets, msg.sender);
        ledger.credit(msg.sender, shares);
        emit Zapped(msg.sender, assets, shares);
    }
}
