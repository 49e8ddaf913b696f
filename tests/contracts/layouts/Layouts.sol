// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

// Storage of every shape solc lays out, for tests/live/ast_layouts.rs: the layouts chaintrace
// computes from this file's AST are compared with the storageLayout and
// transientStorageLayout solc itself writes for it.

type Price is uint96;
type Flag is bool;

interface IFeed {
    function latest() external view returns (uint256);
}

library Keys {
    struct Pair {
        address a;
        address b;
    }
}

contract Base {
    uint8 internal small;
    uint256 public constant LIMIT = 10;
    address public immutable deployer;
    bytes4 internal tag;

    constructor() {
        deployer = msg.sender;
    }
}

contract Middle is Base {
    enum Mode {
        Off,
        On,
        Auto
    }

    struct Inner {
        uint16 a;
        uint16 b;
    }

    struct Outer {
        uint8 x;
        Inner inner;
        uint8 y;
        uint64[3] window;
        Mode mode;
        mapping(address => uint256) credit;
    }

    Mode public mode;
    Outer internal outer;
    Inner[] internal inners;
}

contract Other {
    bool internal flagged;
    int128 internal signedHalf;
}

contract Layouts is Middle, Other {
    Price public price;
    Flag internal flag;
    IFeed public feed;
    address payable internal payee;
    function(uint256) internal returns (uint256) internal hook;
    function(uint256, bool) external view returns (bytes32) internal callback;
    uint8[33] internal bytesWide;
    uint128[3] internal halves;
    bytes17[2] internal wide;
    uint256[2][3] internal grid;
    uint32[][] internal jagged;
    string[] internal names;
    bytes internal blob;
    mapping(string => Keys.Pair) internal pairs;
    mapping(bytes => uint8) internal byBytes;
    mapping(Mode => mapping(IFeed => Price)) internal nested;
    mapping(Price => Outer) internal outers;
    mapping(bytes32 => Inner[2]) internal innerPairs;
    uint256 public constant N = 4;
    bytes2[N * 2] internal sized;
    uint256 internal transient lock;
    address internal transient caller;
    uint16 internal transient depth;
    bool internal last;
}
