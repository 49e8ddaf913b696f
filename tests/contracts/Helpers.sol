// SPDX-License-Identifier: MIT OR Apache-2.0
// Test contracts for chaintrace's live-node tests. Compiled by
// scripts/build-test-contracts.sh into artifacts.json; do not edit one
// without regenerating the other.
pragma solidity 0.8.30;

/// Emits LOG0..LOG4 with exact topic counts (inline assembly), plus a
/// regular Solidity event.
contract Logger {
    event Ping(address indexed from, uint256 indexed n, bytes32 tag);

    uint256 public pings;

    function logAll(uint256 x) external {
        assembly {
            mstore(0x00, x)
            mstore(0x20, 0xc0ffee)
            log0(0x00, 0x40)
            log1(0x00, 0x20, 0x01)
            log2(0x00, 0x20, 0x01, 0x02)
            log3(0x20, 0x20, 0x01, 0x02, 0x03)
            log4(0x00, 0x00, 0x01, 0x02, 0x03, 0x04)
        }
        pings += 1;
        emit Ping(msg.sender, x, bytes32("logAll"));
    }

    /// View, reached through STATICCALL.
    function peek(uint256 x) external view returns (uint256) {
        return x * 2 + pings;
    }
}

/// DELEGATECALL target: writes slot 0 of the *caller's* storage.
/// Layout must match the first slot of Hub (`uint256 value`).
contract DelegateTarget {
    uint256 public value;
    event Stored(address indexed self, address indexed sender, uint256 v);

    function store(uint256 v) external payable {
        value = v;
        emit Stored(address(this), msg.sender, v);
    }
}

/// Reverts in every flavour.
contract Reverter {
    error Custom(uint256 code, address who, string why);

    function failString() external pure {
        revert("chaintrace: plain revert");
    }

    function failRequire(uint256 x) external pure returns (uint256) {
        require(x > 100, "chaintrace: require failed");
        return x;
    }

    uint256 public attempts;

    /// Non-view on purpose: reached through CALL (not STATICCALL), and its
    /// storage write is rolled back by the revert.
    function failCustom(uint256 code) external {
        attempts += 1;
        revert Custom(code, msg.sender, "custom error");
    }

    /// Panic(0x12) when d == 0.
    function div(uint256 n, uint256 d) external pure returns (uint256) {
        return n / d;
    }

    /// Panic(0x01).
    function assertFail(uint256 x) external pure returns (uint256) {
        assert(x == 0xdead);
        return x;
    }

    /// Empty revert data.
    function failEmpty() external pure {
        revert();
    }
}

/// Burns all the gas it is given.
contract Burner {
    uint256 public sink;

    function burn() external {
        uint256 i;
        while (true) {
            unchecked { i++; }
            sink = i;
        }
    }

    /// Pure-arithmetic infinite loop: plain out-of-gas (no SSTORE involved).
    function spin() external pure returns (uint256 x) {
        while (true) {
            unchecked { x = x * 3 + 1; }
            assembly { mstore(0x80, x) }
        }
    }
}

/// Created by Hub with CREATE / CREATE2; can self-destruct.
contract Child {
    address public owner;
    uint256 public tag;
    event Born(address indexed self, uint256 tag, uint256 value);

    constructor(uint256 t) payable {
        owner = msg.sender;
        tag = t;
        emit Born(address(this), t, msg.value);
    }

    function destroy(address payable beneficiary) external {
        selfdestruct(beneficiary);
    }

    receive() external payable {}
}

/// Constructor always reverts (failed CREATE).
contract BadChild {
    constructor() {
        revert("chaintrace: bad constructor");
    }
}

/// Pre-existing contract that self-destructs in a later transaction.
contract Doomed {
    event Bye(address indexed beneficiary, uint256 balance);

    constructor() payable {}

    function destroy(address payable beneficiary) external {
        emit Bye(beneficiary, address(this).balance);
        selfdestruct(beneficiary);
    }

    receive() external payable {}
}

/// Accepts ETH and logs it.
contract Sink {
    event Got(address indexed from, uint256 amount);
    uint256 public total;

    receive() external payable {
        total += msg.value;
        emit Got(msg.sender, msg.value);
    }

    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
    }
}
