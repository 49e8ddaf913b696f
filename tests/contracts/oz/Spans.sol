// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Values that span slots or live only while a transaction runs: a string and a bytes that grow
/// past one slot and shrink back, and transient variables (two packed into one slot).
contract Spans {
    string public name;
    bytes public blob;
    uint256 public count;

    bool transient locked;
    address transient entered;
    uint128 transient depth;
    uint256 transient scratch;

    event Seen(bool locked, address entered, uint128 depth, uint256 scratch);

    function setName(string calldata n) external {
        name = n;
    }

    function setBlob(bytes calldata b) external {
        blob = b;
    }

    /// Writes only the length and the last data word: the other words are read, not written.
    function pushBlob(bytes1 b) external {
        blob.push(b);
    }

    /// Declares a length the data does not have (a corrupt or hostile slot).
    function setNameLength(uint256 len) external {
        assembly {
            sstore(name.slot, add(mul(len, 2), 1))
        }
    }

    /// A guard held while it runs, and a scratch value a failed inner call wrote and lost;
    /// the transient values as they are when it ends, in an event.
    function guarded(uint128 d, uint256 lost) external {
        require(!locked, "locked");
        locked = true;
        entered = msg.sender;
        depth = d;
        scratch = 1;
        try this.fail(lost) {} catch {}
        count += 1;
        locked = false;
        emit Seen(locked, entered, depth, scratch);
    }

    function fail(uint256 v) external {
        scratch = v;
        revert("lost");
    }
}
