// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Reverts the EVM gives no reason for, which chaintrace explains as Hardhat does.
contract NoFallback {
    uint256 public x;

    function test() external {
        x = 1;
    }

    function pay() external payable {
        x = 2;
    }
}

contract StrictFallback {
    uint256 public y;

    fallback() external {
        y = 1;
    }
}

contract Caller {
    function callMissing(address a) external {
        NoFallback(a).test();
    }
}

/// A public array's getter asked for an index past its end.
contract Store {
    uint256[] public items;

    function add(uint256 v) external {
        items.push(v);
    }
}

/// Returns nothing where its callers expect a value.
contract Silent {
    function value() external {}
}

interface IValue {
    function value() external returns (uint256);
}

/// Calls `value()` expecting a uint256: the empty return data cannot be decoded.
contract Asker {
    function ask(address s) external returns (uint256) {
        return IValue(s).value();
    }
}
