// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// The asset a Vault holds: a plain OpenZeppelin ERC20 whose whole supply goes to its deployer.
contract Asset is ERC20 {
    constructor() ERC20("Asset", "AST") {
        _mint(msg.sender, 1_000_000 ether);
    }
}
