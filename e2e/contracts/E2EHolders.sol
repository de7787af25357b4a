// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// A collection with a known set of holders for the explorer's holders view: the constructor
/// mints to `holders` derived addresses, holder i receiving (i % 3) + 1 tokens; `claim` mints
/// more to its caller later, so the holders after the deployment's block differ from now.
contract E2EHolders is ERC721 {
    uint256 private nextId = 1;

    constructor(uint256 holders) ERC721("E2E Holders", "HOLD") {
        for (uint256 i = 0; i < holders; i++) {
            address to = address(uint160(uint256(keccak256(abi.encode("e2e-holder", i)))));
            for (uint256 n = 0; n <= i % 3; n++) _mint(to, nextId++);
        }
    }

    function claim(uint256 count) external {
        for (uint256 n = 0; n < count; n++) _mint(msg.sender, nextId++);
    }
}
