// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Consecutive} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Consecutive.sol";
import {ERC721Burnable} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Burnable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// ERC-2309 collection: the constructor mints one batch per recipient, announced by a single
/// ConsecutiveTransfer event each instead of one Transfer per token. Later mints are ordinary.
/// Metadata is a plain (not base64) JSON data URI, another shape found on real chains.
contract GenesisPioneers is ERC721, ERC721Consecutive, ERC721Burnable, Ownable {
    using Strings for uint256;

    uint256 public nextTokenId;

    constructor(address initialOwner, address[] memory recipients, uint96 batchSize)
        ERC721("Genesis Pioneers", "PIONEER")
        Ownable(initialOwner)
    {
        for (uint256 i = 0; i < recipients.length; i++) {
            _mintConsecutive(recipients[i], batchSize);
        }
        nextTokenId = recipients.length * batchSize;
    }

    function mint(address to) external onlyOwner returns (uint256 tokenId) {
        tokenId = nextTokenId++;
        _mint(to, tokenId);
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        string memory id = tokenId.toString();
        string memory rgb = string.concat(
            (30 + (tokenId * 37) % 200).toString(), ",", (30 + (tokenId * 91) % 200).toString(), ",",
            (30 + (tokenId * 53) % 200).toString()
        );
        // Single quotes inside the SVG keep the JSON valid without escaping; no '#' or '%'.
        return string.concat(
            'data:application/json;utf8,{"name":"Pioneer No. ', id,
            '","description":"One of the genesis pioneers, minted in an ERC-2309 batch.",',
            '"image":"data:image/svg+xml;utf8,<svg xmlns=\'http://www.w3.org/2000/svg\' viewBox=\'0 0 120 120\'>',
            "<rect width='120' height='120' fill='rgb(", rgb, ")'/>",
            "<path d='M20 100 L60 20 L100 100 Z' fill='white' fill-opacity='0.8'/>",
            "<text x='60' y='90' font-size='18' text-anchor='middle'>", id, '</text></svg>"}'
        );
    }

    function _ownerOf(uint256 tokenId) internal view override(ERC721, ERC721Consecutive) returns (address) {
        return super._ownerOf(tokenId);
    }

    function _update(address to, uint256 tokenId, address auth)
        internal
        override(ERC721, ERC721Consecutive)
        returns (address)
    {
        return super._update(to, tokenId, auth);
    }
}
