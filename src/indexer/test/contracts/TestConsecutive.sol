// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Consecutive} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Consecutive.sol";

/// ERC-2309: batches minted in the constructor emit one ConsecutiveTransfer each.
contract TestConsecutive is ERC721Consecutive {
    constructor(address[] memory receivers, uint96[] memory sizes) ERC721("Consecutive", "CONS") {
        for (uint256 i = 0; i < receivers.length; i++) _mintConsecutive(receivers[i], sizes[i]);
    }

    function move(address from, address to, uint256 tokenId) external {
        _transfer(from, to, tokenId);
    }

    function burn(uint256 tokenId) external {
        _burn(tokenId);
    }
}
