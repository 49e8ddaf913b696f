pragma solidity ^0.8.0;

contract C {

  function test(address payable a) public {
  }

}
