// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// A collection whose name, symbol and tokens' metadata are whatever the test hands the
/// constructor: the explorer's browser tests (e2e/explorer-hostile.spec.ts) give it text that
/// reorders what follows it (bidi overrides), invisible and extremely long names, markup and
/// script URLs, and check that the explorer shows all of it as inert, contained text. The ids
/// in `burned` are minted and burned at once (a burned token's page is tested too).
contract E2EHostileText is ERC721 {
    mapping(uint256 => string) private uris;

    constructor(
        string memory name_,
        string memory symbol_,
        uint256[] memory ids,
        string[] memory tokenUris,
        uint256[] memory burned
    ) ERC721(name_, symbol_) {
        require(ids.length == tokenUris.length, "one URI per id");
        for (uint256 i = 0; i < ids.length; i++) {
            uris[ids[i]] = tokenUris[i];
            _mint(msg.sender, ids[i]);
        }
        for (uint256 i = 0; i < burned.length; i++) {
            _mint(msg.sender, burned[i]);
            _burn(burned[i]);
        }
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        return uris[tokenId];
    }
}
