// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// An OpenZeppelin ERC20 whose storage the state-changes tests read by variable.
contract Token is ERC20 {
    constructor(uint256 supply) ERC20("Token", "TKN") {
        _mint(msg.sender, supply);
    }
}

/// Storage of every kind a slot's value is read by: one packed slot (an address, an enum, a
/// bool, a signed integer, a bytes4), a string, a mapping by string to a packed struct, and a
/// dynamic array of packed elements.
contract Registry {
    enum Status {
        Unset,
        Active,
        Paused
    }

    struct Entry {
        uint128 amount;
        int64 delta;
        bool live;
    }

    address public owner;
    Status public status;
    bool public open;
    int24 public tick;
    bytes4 public tag;
    string public title;
    mapping(string => Entry) public entries;
    uint8[] public marks;

    function update(
        Status s,
        int24 t,
        bytes4 g,
        string calldata ti,
        string calldata key,
        uint128 amount,
        int64 delta
    ) external {
        owner = msg.sender;
        status = s;
        open = true;
        tick = t;
        tag = g;
        title = ti;
        entries[key] = Entry(amount, delta, true);
        marks.push(uint8(amount));
    }
}
