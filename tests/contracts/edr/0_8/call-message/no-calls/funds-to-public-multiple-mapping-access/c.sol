pragma solidity ^0.8.0;


contract C {

  mapping(uint => mapping(uint8 => mapping(int => uint))) public a;

  constructor() public {
  }

}
