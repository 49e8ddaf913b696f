pragma solidity ^0.8.0;

contract C {
  uint public x;

  function test() public {
    x--;
  }
}
