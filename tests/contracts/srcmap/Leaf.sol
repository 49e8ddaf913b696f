// SPDX-License-Identifier: MIT OR Apache-2.0
// Source-location tests (tests/sources_live.rs): each failure below is asserted at the line
// the test finds in this file's text. Compiled by scripts/build-srcmap-contracts.sh.
pragma solidity 0.8.30;

import "./MathLib.sol";

contract Leaf {
    error Denied(uint256 code, address who);

    uint256 public total;
    uint256 public fresh;

    modifier positive(uint256 x) {
        require(x > 0, "leaf: zero");
        _;
    }

    function leafRevert(uint256 x) external view returns (uint256) {
        return _check(x) + total;
    }

    function _check(uint256 x) internal pure returns (uint256) {
        require(x > 10, "leaf: too small");
        return x;
    }

    function deny(uint256 code) external {
        total += 1;
        revert Denied(code, msg.sender);
    }

    function addUp(uint256 a, uint256 b) external returns (uint256) {
        total = _add(a, b);
        return total;
    }

    function _add(uint256 a, uint256 b) internal pure returns (uint256) {
        return a + b;
    }

    function guarded(uint256 x) external positive(x) returns (uint256) {
        total += x;
        return total;
    }

    function subtract(uint256 a, uint256 b) external pure returns (uint256) {
        return MathLib.checkedSub(a, b);
    }

    function store(uint256 v) external {
        fresh = v;
    }

    function broken() external pure {
        assembly {
            invalid()
        }
    }
}
