// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
// Not used here: imported so that forge builds the proxy the Ledger is deployed behind
// (out/ERC1967Proxy.sol/ERC1967Proxy.json).
import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";

/// A ledger of credits, deployed behind an ERC1967Proxy and upgradeable the UUPS way by its
/// owner. Like OpenZeppelin 5's upgradeable contracts, it keeps its state in an ERC-7201
/// namespace: its own (chaintrace.ledger) beside Ownable's, ERC20's and Initializable's. Each
/// credit is also minted as a Ledger token.
contract Ledger is Initializable, OwnableUpgradeable, ERC20Upgradeable, UUPSUpgradeable {
    /// @custom:storage-location erc7201:chaintrace.ledger
    struct LedgerStorage {
        mapping(address account => uint256) credits;
        uint64 count;
        address router;
    }

    // keccak256(abi.encode(uint256(keccak256("chaintrace.ledger")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant LEDGER_STORAGE_LOCATION =
        0x662746c8c838cb7a4d7d7350ebf98ce393408630f5321ac420b05972f637a300;

    event Credited(address indexed account, uint256 amount, uint64 count);
    event RouterSet(address router);

    error NotRouter(address caller);

    function _getLedgerStorage() private pure returns (LedgerStorage storage $) {
        assembly {
            $.slot := LEDGER_STORAGE_LOCATION
        }
    }

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function initialize(address owner_) external initializer {
        __Ownable_init(owner_);
        __ERC20_init("Ledger credit", "LCR");
    }

    /// The one account that may credit: the Router.
    function setRouter(address router_) external onlyOwner {
        _getLedgerStorage().router = router_;
        emit RouterSet(router_);
    }

    function credit(address account, uint256 amount) external {
        LedgerStorage storage $ = _getLedgerStorage();
        if (msg.sender != $.router) revert NotRouter(msg.sender);
        $.credits[account] += amount;
        $.count += 1;
        _mint(account, amount);
        emit Credited(account, amount, $.count);
    }

    function credits(address account) external view returns (uint256) {
        return _getLedgerStorage().credits[account];
    }

    function count() external view returns (uint64) {
        return _getLedgerStorage().count;
    }

    function router() external view returns (address) {
        return _getLedgerStorage().router;
    }

    function _authorizeUpgrade(address) internal override onlyOwner {}
}
