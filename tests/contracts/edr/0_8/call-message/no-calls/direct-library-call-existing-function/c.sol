pragma solidity ^0.8.0;

library L {

  function f() public returns (uint) {
    return 1;
  }

}
