pragma solidity ^0.8.0;

import "./e.sol";

contract D is E {

}
