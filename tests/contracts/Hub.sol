// SPDX-License-Identifier: MIT OR Apache-2.0
// Orchestrator contract for chaintrace's live-node tests. See Helpers.sol.
pragma solidity 0.8.30;

import "./Helpers.sol";

contract Hub {
    // slot 0: must line up with DelegateTarget.value
    uint256 public value;
    uint256 public counter;

    Logger public immutable logger;
    DelegateTarget public immutable delegateTarget;
    Reverter public immutable reverter;
    Burner public immutable burner;

    event Depth(uint256 indexed depth, uint256 peeked);
    event Caught(string kind, bytes data);
    event Spawned(address indexed created, address indexed created2);
    event Precompiles(address recovered, bytes32 sha, bytes identity, bytes modexp, bytes20 ripemd);
    event StaticResult(bool writeOk, uint256 peeked);

    constructor(Logger l, DelegateTarget d, Reverter r, Burner b) payable {
        logger = l;
        delegateTarget = d;
        reverter = r;
        burner = b;
    }

    // ---------------------------------------------------------------- nesting
    /// Hub.deep(n) -> Hub.deep(n-1) -> ... -> Logger.logAll; each level also
    /// STATICCALLs Logger.peek and forwards half of its value.
    function deep(uint256 depth) public payable returns (uint256) {
        counter += 1;
        uint256 peeked = logger.peek(depth);
        emit Depth(depth, peeked);
        if (depth == 0) {
            logger.logAll(counter);
            return peeked;
        }
        return this.deep{value: msg.value / 2}(depth - 1) + 1;
    }

    // ----------------------------------------------------------- delegatecall
    function delegate(uint256 v) external payable returns (uint256) {
        (bool ok, ) = address(delegateTarget).delegatecall(
            abi.encodeCall(DelegateTarget.store, (v + value))
        );
        require(ok, "delegatecall failed");
        return value;
    }

    // ------------------------------------------------------------- staticcall
    /// A view call (STATICCALL), a low-level STATICCALL into a state-writing
    /// function (fails: write protection) and a STATICCALL into a precompile.
    function staticStuff(uint256 x) external returns (uint256) {
        uint256 peeked = logger.peek(x);
        (bool writeOk, ) = address(delegateTarget).staticcall{gas: 100_000}(
            abi.encodeCall(DelegateTarget.store, (x))
        );
        (bool ok2, bytes memory ret) = address(logger).staticcall(
            abi.encodeCall(Logger.peek, (x + 1))
        );
        require(ok2 && abi.decode(ret, (uint256)) == peeked + 2, "peek mismatch");
        emit StaticResult(writeOk, peeked);
        return peeked;
    }

    // ------------------------------------------------------- CREATE / CREATE2
    function spawn(bytes32 salt) external payable returns (address a, address b) {
        Child c1 = new Child{value: msg.value / 2}(1);
        Child c2 = new Child{salt: salt, value: msg.value - msg.value / 2}(2);
        // failed CREATE inside try/catch
        try new BadChild() returns (BadChild) {
            revert("unreachable");
        } catch Error(string memory why) {
            emit Caught("badchild", bytes(why));
        }
        emit Spawned(address(c1), address(c2));
        return (address(c1), address(c2));
    }

    // ------------------------------------------------------------ selfdestruct
    /// CREATE2 a Child and make it SELFDESTRUCT in the same transaction
    /// (EIP-6780: the account really is deleted).
    function createAndDestroy(bytes32 salt, address payable beneficiary) external payable returns (address) {
        Child c = new Child{salt: salt, value: msg.value}(3);
        c.destroy(beneficiary);
        return address(c);
    }

    /// Make a pre-existing contract SELFDESTRUCT (EIP-6780: only the balance
    /// moves, code and storage stay).
    function destroyExisting(Doomed d, address payable beneficiary) external {
        d.destroy(beneficiary);
    }

    // ------------------------------------------------------------ precompiles
    function precompiles() external returns (address recovered) {
        // 0x01 ecrecover: eth_sign of 0x11..11 by anvil's account 0
        // (0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266).
        bytes32 h = 0x1111111111111111111111111111111111111111111111111111111111111111;
        bytes32 digest = keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", h));
        recovered = ecrecover(
            digest,
            27,
            0x0906e5a6b04b9e3c235a2b815a32c91cd224de22cfcb09c22770758a589c41eb,
            0x5caff8173afab85ff05471466b6628b5c06f6f73018e3fadc6a4dcddfed073c0
        );
        require(recovered == 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, "ecrecover mismatch");

        // 0x02 sha256
        bytes32 sha = sha256(abi.encodePacked("chaintrace"));

        // 0x03 ripemd160
        bytes20 rip = ripemd160(abi.encodePacked("chaintrace"));

        // 0x04 identity (low-level CALL, not STATICCALL)
        (bool ok4, bytes memory ident) = address(0x04).call(hex"deadbeefcafe");
        require(ok4, "identity failed");

        // 0x05 modexp: 3^5 mod 7 = 5
        (bool ok5, bytes memory mexp) = address(0x05).staticcall(
            abi.encodePacked(uint256(1), uint256(1), uint256(1), uint8(3), uint8(5), uint8(7))
        );
        require(ok5 && mexp.length == 1 && uint8(mexp[0]) == 5, "modexp failed");

        emit Precompiles(recovered, sha, ident, mexp, rip);
    }

    // --------------------------------------------------------- value transfer
    /// Forwards ETH: transfer() (2300 stipend) to `eoa`, call{value} into a
    /// contract with receive(), and a two-hop forward through Sink.
    function fanout(address payable eoa, Sink sink) external payable {
        uint256 third = msg.value / 3;
        eoa.transfer(third);
        (bool ok, ) = address(sink).call{value: third}("");
        require(ok, "sink failed");
        sink.forward{value: msg.value - 2 * third}(eoa);
    }

    // ------------------------------------------------------- caught failures
    /// Succeeds; every subcall below reverts and is caught.
    function tryCatchAll() external returns (uint256 caught) {
        try reverter.failString() {} catch Error(string memory why) {
            emit Caught("error", bytes(why)); caught++;
        }
        try reverter.failCustom(7) {} catch (bytes memory data) {
            emit Caught("custom", data); caught++;
        }
        try reverter.div(1, 0) returns (uint256) {} catch Panic(uint256 code) {
            emit Caught("panic", abi.encode(code)); caught++;
        }
        try reverter.assertFail(1) returns (uint256) {} catch Panic(uint256 code) {
            emit Caught("assert", abi.encode(code)); caught++;
        }
        try reverter.failEmpty() {} catch (bytes memory data) {
            emit Caught("empty", data); caught++;
        }
        require(caught == 5, "not all caught");
    }

    /// Succeeds; two Burner subcalls run out of gas and are caught (one in
    /// an SSTORE loop, one in a pure-arithmetic loop).
    function oogCaught() external returns (uint256 caught) {
        try burner.burn{gas: 50_000}() {} catch (bytes memory data) {
            emit Caught("oog-sstore", data); caught++;
        }
        try burner.spin{gas: 30_000}() returns (uint256) {} catch (bytes memory data) {
            emit Caught("oog-spin", data); caught++;
        }
        require(caught == 2, "not all caught");
    }

    // -------------------------------------------------- top-level failures
    /// Custom error raised two frames down and bubbled to the top.
    function failNested(uint256 code) external {
        counter += 1;
        this.failInner(code);
    }

    function failInner(uint256 code) external {
        reverter.failCustom(code);
    }

    receive() external payable {}
}
