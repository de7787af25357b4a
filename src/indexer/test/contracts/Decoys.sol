// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// Standard ERC-20: Transfer has 3 topics and must never become an NFT.
contract DecoyToken is ERC20 {
    constructor() ERC20("Decoy", "DCY") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}

/// Old ERC-20 whose Transfer has no indexed arguments: the same 1-topic,
/// 96-byte shape as a legacy NFT. No ownerOf, no ERC-165: must be rejected.
contract LegacyDecoyToken {
    event Transfer(address from, address to, uint256 value);

    mapping(address => uint256) public balanceOf;

    function mint(address to, uint256 value) external {
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }
}
