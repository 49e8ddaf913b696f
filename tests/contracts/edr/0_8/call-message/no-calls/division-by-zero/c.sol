pragma solidity ^0.8.0;


contract C {

  function test(uint256 i) public
  {
    uint256 j = 123 / i;
  }

}
