pragma solidity ^0.8.0;

contract D {
  uint x;

  function test2() public {
    x = 1 / x;
  }
}
