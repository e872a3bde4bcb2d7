// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

/// @title TestUSDT
/// @notice A deliberately small 6-decimal ERC-20 token for local tests only.
/// The deployer ("owner") can mint tokens and block addresses; a transfer
/// (or transferFrom) whose sender is blocked reverts, which lets tests
/// produce a mined-but-failed transaction on demand.
contract TestUSDT {
    string public constant name = "Tether USD";
    string public constant symbol = "USDT";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 public totalSupply;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public blocked;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    modifier onlyOwner() {
        require(msg.sender == owner, "TestUSDT: caller is not the owner");
        _;
    }

    constructor() {
        owner = msg.sender;
    }

    /// Creates `amount` new tokens for `to`.
    function mint(address to, uint256 amount) external onlyOwner {
        require(to != address(0), "TestUSDT: mint to the zero address");
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    /// Blocks (or unblocks) `account`: transfers out of a blocked account revert.
    function setBlocked(address account, bool isBlocked) external onlyOwner {
        blocked[account] = isBlocked;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= amount, "TestUSDT: insufficient allowance");
            allowance[from][msg.sender] = allowed - amount;
        }
        _move(from, to, amount);
        return true;
    }

    function _move(address from, address to, uint256 amount) private {
        require(!blocked[from], "TestUSDT: sender is blocked");
        require(to != address(0), "TestUSDT: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= amount, "TestUSDT: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - amount;
        }
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
