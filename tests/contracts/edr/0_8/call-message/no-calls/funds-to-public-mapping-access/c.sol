pragma solidity ^0.8.0;


contract C {

  mapping(uint => uint) public a;

  constructor() public {
  }

}
