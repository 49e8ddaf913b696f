// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

contract Fragile {
    uint256 public seed;

    constructor(uint256 s) {
        require(s != 0, "fragile: zero seed");
        seed = s;
    }
}

contract Factory {
    function make(bytes32 salt, uint256 s) external returns (address) {
        Fragile f = new Fragile{salt: salt}(s);
        return address(f);
    }
}
