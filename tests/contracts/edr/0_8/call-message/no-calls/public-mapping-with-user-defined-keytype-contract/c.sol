pragma solidity ^0.8.0;


contract C {

  mapping(C => uint) public a;

  constructor() public {
  }

}
