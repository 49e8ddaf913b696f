pragma solidity ^0.8.0;

contract IgnoredC  {

  constructor() public {
    assert(false);
  }

}
