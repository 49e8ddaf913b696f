pragma solidity ^0.8.0;

import "./../../../../../../../../console.sol";

contract C {

	function log(
  		bytes21 p35, bytes22 p36, bytes23 p37, bytes24 p38, bytes25 p39, bytes26 p40,
      bytes27 p41, bytes28 p42, bytes29 p43, bytes30 p44, bytes31 p45
  ) public {
    console.logBytes21(p35);
    console.logBytes22(p36);
    console.logBytes23(p37);
    console.logBytes24(p38);
    console.logBytes25(p39);
    console.logBytes26(p40);
    console.logBytes27(p41);
    console.logBytes28(p42);
    console.logBytes29(p43);
    console.logBytes30(p44);
    console.logBytes31(p45);
  }
}
