// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Reverts the EVM gives no reason for, which chaintrace explains as Hardhat does.
contract NoFallback {
    uint256 public x;

    function test() external {
        x = 3;
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
