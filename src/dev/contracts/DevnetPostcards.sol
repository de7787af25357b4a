// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721URIStorage} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721URIStorage.sol";
import {ERC721Burnable} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Burnable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// Off-chain metadata, as most real collections have: tokenURI() is `<baseURI><id>.json`, served
/// by the devnet's metadata helper over HTTP. The base URI is settable by the owner because the
/// helper's port can change between runs. ERC721URIStorage emits ERC-4906 MetadataUpdate events.
contract DevnetPostcards is ERC721, ERC721URIStorage, ERC721Burnable, Ownable {
    using Strings for uint256;

    uint256 public nextTokenId;
    string private _baseTokenURI;
    mapping(uint256 tokenId => uint256) public revision;

    constructor(address initialOwner, string memory baseTokenURI)
        ERC721("Devnet Postcards", "POSTCARD")
        Ownable(initialOwner)
    {
        _baseTokenURI = baseTokenURI;
    }

    function mint(address to) external onlyOwner returns (uint256 tokenId) {
        tokenId = nextTokenId++;
        _mint(to, tokenId);
        _setTokenURI(tokenId, string.concat(tokenId.toString(), ".json"));
    }

    /// Points the token at a new revision of its metadata (emits MetadataUpdate).
    function refreshMetadata(uint256 tokenId) external onlyOwner {
        _requireOwned(tokenId);
        uint256 rev = ++revision[tokenId];
        _setTokenURI(tokenId, string.concat(tokenId.toString(), ".json?v=", rev.toString()));
    }

    function baseURI() external view returns (string memory) {
        return _baseTokenURI;
    }

    function setBaseURI(string calldata newBaseURI) external onlyOwner {
        _baseTokenURI = newBaseURI;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    /// Collection-level metadata (ERC-7572 convention), served by the same helper.
    function contractURI() external view returns (string memory) {
        return string.concat(_baseTokenURI, "collection.json");
    }

    function _baseURI() internal view override returns (string memory) {
        return _baseTokenURI;
    }

    function tokenURI(uint256 tokenId) public view override(ERC721, ERC721URIStorage) returns (string memory) {
        return super.tokenURI(tokenId);
    }

    function supportsInterface(bytes4 interfaceId)
        public
        view
        override(ERC721, ERC721URIStorage)
        returns (bool)
    {
        return super.supportsInterface(interfaceId);
    }
}
