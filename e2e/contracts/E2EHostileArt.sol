// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// A collection whose one token's metadata is whatever the test hands the constructor: the
/// explorer's browser tests give it an SVG image with script, event handlers and external
/// references, and check that none of it runs or loads in the explorer.
contract E2EHostileArt is ERC721 {
    string private uri;

    constructor(string memory tokenUri) ERC721("E2E Hostile Art", "HOSTILE") {
        uri = tokenUri;
        _mint(msg.sender, 1);
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        return uri;
    }
}
