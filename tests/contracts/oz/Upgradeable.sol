// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";

/// An OpenZeppelin 5 upgradeable ERC20 (its storage in ERC-7201 namespaces, none in solc's
/// `storageLayout`), deployed behind an `ERC1967Proxy`: the state-changes tests read the
/// proxy's storage with this implementation's layout.
contract UpgradeableToken is ERC20Upgradeable, OwnableUpgradeable {
    /// A variable of its own, in the ordinary layout (slot 0) beside the namespaces.
    uint256 public transfers;

    constructor() {
        _disableInitializers();
    }

    function initialize(uint256 supply) external initializer {
        __ERC20_init("Upgradeable", "UPG");
        __Ownable_init(msg.sender);
        _mint(msg.sender, supply);
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        transfers += 1;
        return super.transfer(to, value);
    }
}
