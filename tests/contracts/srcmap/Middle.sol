// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

import "./Leaf.sol";

contract Middle {
    Leaf public immutable leaf;

    constructor(Leaf l) {
        leaf = l;
    }

    function midRevert(uint256 x) external view returns (uint256) {
        return leaf.leafRevert(x) + 1;
    }

    function starve(uint256 v) external {
        (bool ok, ) = address(leaf).call{gas: 10_000}(abi.encodeCall(Leaf.store, (v)));
        require(ok, "mid: store failed");
    }
}
