pragma solidity ^0.8.0;

library L {

  function f() internal returns (uint) {
    return 1;
  }

}
