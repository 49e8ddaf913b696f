pragma solidity ^0.8.0;

contract D {

  receive () payable external {
    revert("D failed");
  }

}
