// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// One inherited function run by two deployed contracts, and an overloaded one: rows of gas by
/// function keyed by the contract that ran them, overloads told apart by their types.
contract Base {
    uint256 public total;

    function _update(uint256 v) internal {
        total += v;
    }
}

contract Token is Base {
    function mint(uint256 v) external {
        _update(v);
    }

    function mint(uint256 v, uint256 w) external {
        _update(v + w);
    }
}

contract Vault is Base {
    function deposit(uint256 v) external {
        _update(v);
    }
}

contract Router {
    function both(Token t, Vault v) external {
        t.mint(1);
        t.mint(2, 3);
        v.deposit(4);
    }
}
