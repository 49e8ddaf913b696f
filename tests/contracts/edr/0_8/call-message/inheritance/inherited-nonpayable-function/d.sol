pragma solidity ^0.8.0;

contract D {

  function test() external {
  }

}
