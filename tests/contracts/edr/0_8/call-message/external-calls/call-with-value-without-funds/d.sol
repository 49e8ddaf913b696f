pragma solidity ^0.8.0;

import "./c.sol";

contract D {

  function test2() public payable {
  }
}
