// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// tokenURI misbehaves by token id: 1 reverts, 2 returns bytes that are not
/// an ABI string, 3 returns a string larger than the metadata limit; other
/// ids return whatever was set with setURI.
contract HostileURIs is ERC721 {
    mapping(uint256 => string) private uris;

    constructor() ERC721("Hostile", "HST") {}

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    function setURI(uint256 tokenId, string calldata uri) external {
        uris[tokenId] = uri;
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        if (tokenId == 1) revert("no uri for you");
        if (tokenId == 2) {
            assembly {
                mstore(0, 0xdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef)
                return(0, 7)
            }
        }
        if (tokenId == 3) return string(new bytes(1_100_000));
        return uris[tokenId];
    }
}
