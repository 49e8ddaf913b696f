pragma solidity ^0.8.0;


contract C {
  function test() public {
  }

  function test(uint x) public {
  }

}
