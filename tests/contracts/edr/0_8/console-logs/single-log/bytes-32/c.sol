pragma solidity ^0.8.0;

import "./../../../../../../../../console.sol";

contract C {

	function log(bytes32 p46) public {
    console.logBytes32(p46);
  }
}
