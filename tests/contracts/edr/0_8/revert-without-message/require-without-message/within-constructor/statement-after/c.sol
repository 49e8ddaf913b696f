pragma solidity ^0.8.0;

contract C {

  uint i = 0;

  constructor() public  payable {


    require(false);
    i += 1;
  }

}
