pragma solidity ^0.8.0;

import "./d.sol";

contract C is D {
  uint public x = 42;
}
