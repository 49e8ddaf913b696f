pragma solidity ^0.8.1;

import "./d.sol";

contract C {
  function test() public {
    fail();
  }
}
