pragma solidity ^0.8.0;


contract C {

  uint256[] public a;

}
