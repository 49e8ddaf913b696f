pragma solidity ^0.8.0;


contract C {

  constructor(uint256 i) public
  {
    uint256 j = 123 / i;
  }

}
