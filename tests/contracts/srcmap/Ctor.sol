// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Constructors that fail: in an internal function they call, in an inherited constructor, in a
/// modifier of the constructor, and in an external call they make; deployed by a transaction
/// and by CREATE from a contract.
contract Callee {
    function poke(uint256 x) external pure returns (uint256) {
        require(x != 4, "callee: four");
        return x;
    }
}

contract Origin {
    uint256 public base;

    constructor(uint256 a) {
        _checkOrigin(a);
        base = a;
    }

    function _checkOrigin(uint256 a) internal pure {
        require(a != 1, "origin: one");
    }
}

contract Guarded is Origin {
    uint256 public value;

    modifier notTwo(uint256 x) {
        require(x != 2, "guarded: two");
        _;
    }

    constructor(uint256 x, address callee) Origin(x + 0) notTwo(x) {
        _init(x);
        if (callee != address(0)) {
            value = Callee(callee).poke(x);
        }
    }

    function _init(uint256 x) internal {
        require(x != 3, "guarded: three");
        value = x;
    }
}

contract Maker {
    function make(uint256 x, address callee) external returns (address) {
        Guarded g = new Guarded(x, callee);
        return address(g);
    }
}
