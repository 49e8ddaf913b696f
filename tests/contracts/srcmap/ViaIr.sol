// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

/// Compiled on its own with viaIR (scripts/build-srcmap-contracts.sh).
contract ViaIr {
    uint256 public count;

    function bump(uint256 by) external returns (uint256) {
        require(by < 5, "viair: too much");
        count += by;
        return count;
    }
}
