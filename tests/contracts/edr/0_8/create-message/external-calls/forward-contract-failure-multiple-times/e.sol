pragma solidity ^0.8.0;

contract E {

  function fail() public {





    revert("E failed");
  }

}
