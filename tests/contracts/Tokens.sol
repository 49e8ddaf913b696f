// SPDX-License-Identifier: MIT
// Tokens for chaintrace's asset-change tests (tests/assets.rs): an ERC-20 with a string symbol
// and 6 decimals, an early-style ERC-20 whose symbol is a bytes32, an ERC-721, an ERC-1155 and
// WETH9 (deposit/withdraw; name and symbol in storage, as the deployed WETH9 has them), each
// with the events and balance getters of its standard, plus Mover, which moves tokens inside
// one transaction and has a caught inner revert. Minimal on purpose: no approvals, no receiver
// hooks (the tests send to EOAs). Not part of the shared scenario.
pragma solidity 0.8.30;

contract AssetToken {
    event Transfer(address indexed from, address indexed to, uint256 value);

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function symbol() external pure returns (string memory) {
        return "AST";
    }

    function decimals() external pure returns (uint8) {
        return 6;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        require(balanceOf[msg.sender] >= amount, "balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}

contract OldToken {
    event Transfer(address indexed from, address indexed to, uint256 value);

    bytes32 public symbol = "OLD";
    uint256 public decimals = 18;
    mapping(address => uint256) public balanceOf;

    constructor() {
        balanceOf[msg.sender] = 1000 ether;
        emit Transfer(address(0), msg.sender, 1000 ether);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        require(balanceOf[msg.sender] >= amount, "balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}

contract Nft {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);

    mapping(uint256 => address) public ownerOf;
    mapping(address => uint256) public balanceOf;

    function symbol() external pure returns (string memory) {
        return "NFT";
    }

    function mint(address to, uint256 id) external {
        require(ownerOf[id] == address(0), "minted");
        ownerOf[id] = to;
        balanceOf[to] += 1;
        emit Transfer(address(0), to, id);
    }

    function transferFrom(address from, address to, uint256 id) external {
        require(ownerOf[id] == from && msg.sender == from, "not owner");
        ownerOf[id] = to;
        balanceOf[from] -= 1;
        balanceOf[to] += 1;
        emit Transfer(from, to, id);
    }
}

contract Multi {
    event TransferSingle(
        address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value
    );
    event TransferBatch(
        address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values
    );

    mapping(uint256 => mapping(address => uint256)) private balances;

    function balanceOf(address account, uint256 id) external view returns (uint256) {
        return balances[id][account];
    }

    function mint(address to, uint256 id, uint256 amount) external {
        balances[id][to] += amount;
        emit TransferSingle(msg.sender, address(0), to, id, amount);
    }

    function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes calldata)
        external
    {
        require(msg.sender == from, "not owner");
        balances[id][from] -= amount;
        balances[id][to] += amount;
        emit TransferSingle(msg.sender, from, to, id, amount);
    }

    function safeBatchTransferFrom(
        address from,
        address to,
        uint256[] calldata ids,
        uint256[] calldata amounts,
        bytes calldata
    ) external {
        require(msg.sender == from && ids.length == amounts.length, "bad batch");
        for (uint256 i = 0; i < ids.length; i++) {
            balances[ids[i]][from] -= amounts[i];
            balances[ids[i]][to] += amounts[i];
        }
        emit TransferBatch(msg.sender, from, to, ids, amounts);
    }
}

contract Weth {
    string public name = "Wrapped Ether";
    string public symbol = "WETH";
    uint8 public decimals = 18;

    event Transfer(address indexed src, address indexed dst, uint256 wad);
    event Deposit(address indexed dst, uint256 wad);
    event Withdrawal(address indexed src, uint256 wad);

    mapping(address => uint256) public balanceOf;

    receive() external payable {
        deposit();
    }

    function deposit() public payable {
        balanceOf[msg.sender] += msg.value;
        emit Deposit(msg.sender, msg.value);
    }

    function withdraw(uint256 wad) public {
        require(balanceOf[msg.sender] >= wad, "balance");
        balanceOf[msg.sender] -= wad;
        payable(msg.sender).transfer(wad);
        emit Withdrawal(msg.sender, wad);
    }

    function transfer(address dst, uint256 wad) public returns (bool) {
        require(balanceOf[msg.sender] >= wad, "balance");
        balanceOf[msg.sender] -= wad;
        balanceOf[dst] += wad;
        emit Transfer(msg.sender, dst, wad);
        return true;
    }
}

contract Mover {
    /// Sends `amount` of `token` to `to`, then tries to send it again in a call that reverts:
    /// only the first transfer happens.
    function pay(AssetToken token, address to, uint256 amount) external {
        token.transfer(to, amount);
        try this.payAndFail(token, to, amount) {} catch {}
    }

    function payAndFail(AssetToken token, address to, uint256 amount) external {
        token.transfer(to, amount);
        revert("undone");
    }

    /// Wraps the value sent, passes half of it on as WETH, unwraps a quarter and sends that on
    /// as ether.
    function wrapAndSend(Weth weth, address payable to) external payable {
        weth.deposit{value: msg.value}();
        weth.transfer(to, msg.value / 2);
        weth.withdraw(msg.value / 4);
        to.transfer(msg.value / 4);
    }

    receive() external payable {}
}
