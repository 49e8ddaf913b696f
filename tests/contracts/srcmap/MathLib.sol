// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

/// Linked library: Leaf reaches checkedSub by DELEGATECALL.
library MathLib {
    function checkedSub(uint256 a, uint256 b) external pure returns (uint256) {
        require(b <= a, "lib: underflow");
        return a - b;
    }
}
