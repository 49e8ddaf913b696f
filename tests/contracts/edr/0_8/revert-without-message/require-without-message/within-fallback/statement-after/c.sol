pragma solidity ^0.8.0;

contract C {

  uint i = 0;

  fallback() external {


    require(false);
    i += 1;
  }

}
