// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// OpenZeppelin Contracts as npm publishes them (5.7.0, scripts/install-test-tools.sh), used as a
// project would: an ERC20 asset and an ERC4626 vault over it whose keepers AccessControl
// manages. tests/live/oz_world.rs deploys them on anvil and names what each transaction changed.

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

contract Asset is ERC20 {
    constructor() ERC20("Asset", "AST") {
        _mint(msg.sender, 1_000_000 ether);
    }
}

contract Vault is ERC4626, AccessControl {
    bytes32 public constant KEEPER = keccak256("KEEPER");
    uint64 public harvests;
    bool public paused;

    constructor(IERC20 asset_) ERC20("Vault share", "vAST") ERC4626(asset_) {
        _grantRole(DEFAULT_ADMIN_ROLE, msg.sender);
    }

    function harvest() external onlyRole(KEEPER) {
        harvests += 1;
    }

    function setPaused(bool p) external onlyRole(DEFAULT_ADMIN_ROLE) {
        paused = p;
    }
}
