pragma solidity ^0.8.0;

import "./../../../../../../../console.sol";

contract C {

	function log() public {
		console.log();
	}
}
