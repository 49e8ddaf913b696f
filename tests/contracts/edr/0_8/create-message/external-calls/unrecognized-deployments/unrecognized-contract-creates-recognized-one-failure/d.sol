pragma solidity ^0.8.0;

contract D {

    constructor() public {
        revert("d");
    }
}
