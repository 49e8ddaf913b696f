pragma solidity ^0.8.0;


contract C {

  uint[] public a;

  constructor() public {
    a.push(0);
  }

}
