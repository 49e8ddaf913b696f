pragma solidity ^0.8.0;

contract D {

  fallback () external {
    revert("inherited fallback");
  }

}
