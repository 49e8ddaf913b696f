// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

/// A forwarding proxy: every call is DELEGATECALLed to `implementation`.
contract Proxy {
    address public immutable implementation;

    constructor(address impl) {
        implementation = impl;
    }

    fallback() external payable {
        address impl = implementation;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), impl, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }
}
