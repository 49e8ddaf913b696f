// SPDX-License-Identifier: MIT OR Apache-2.0
// Gas-by-source tests (tests/gas_source_live.rs): the test reads the lines below from this text
// and checks where `chaintrace gas --by-line --by-function` puts the gas of each.
pragma solidity 0.8.30;

contract GasProfile {
    mapping(uint256 => uint256) public slots;
    uint256 public acc;
    uint256 public seed = 7;

    function run(uint256 n) external returns (uint256) {
        uint256 s = 0;
        for (uint256 i = 0; i < n; i++) {
            s += _mix(i);
        }
        slots[n] = s;
        acc = _depth(n);
        return s;
    }

    /// Reads storage, so the optimizer keeps it a function of its own.
    function _mix(uint256 x) internal view returns (uint256) {
        return x * seed + (x >> 1);
    }

    function _depth(uint256 n) internal returns (uint256) {
        if (n == 0) {
            return seed;
        }
        return _depth(n - 1) + 1;
    }
}

/// A loop of internal calls, then a revert: a failed frame that ran about 1M gas, the
/// source-location path at its fullest (scripts/bench-srcmap.sh). A contract of its own, so that
/// the optimizer shares no code between it and GasProfile.
contract LoopThenFail {
    uint256 public seed = 7;

    function runThenFail(uint256 n) external view returns (uint256) {
        uint256 s = 0;
        for (uint256 i = 0; i < n; i++) {
            s += _mix(i);
        }
        require(s == 0, "gasprofile: ran");
        return s;
    }

    function _mix(uint256 x) internal view returns (uint256) {
        return x * seed + (x >> 1);
    }
}
