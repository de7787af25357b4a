// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {IERC4906} from "@openzeppelin/contracts/interfaces/IERC4906.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// Standard OpenZeppelin ERC-721 with free mint/burn, settable URIs, ERC-4906 and ERC-7572 events.
contract TestNFT is ERC721, IERC4906 {
    /// ERC-7572: the contract-level metadata (contractURI) changed.
    event ContractURIUpdated();

    string private baseUri;
    string public contractURI;
    mapping(uint256 => string) private uris;

    constructor(string memory name_, string memory symbol_, string memory baseUri_) ERC721(name_, symbol_) {
        baseUri = baseUri_;
    }

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    /// ERC721A-style batch: sequential ids in one transaction, one Transfer per token.
    function mintBatch(address to, uint256 firstId, uint256 quantity) external {
        for (uint256 i = 0; i < quantity; i++) _mint(to, firstId + i);
    }

    /// Moves sequential ids in one transaction (one Transfer each).
    function moveBatch(address from, address to, uint256 firstId, uint256 quantity) external {
        for (uint256 i = 0; i < quantity; i++) _transfer(from, to, firstId + i);
    }

    function burn(uint256 tokenId) external {
        _burn(tokenId);
    }

    function move(address from, address to, uint256 tokenId) external {
        _transfer(from, to, tokenId);
    }

    function setTokenURI(uint256 tokenId, string calldata uri) external {
        uris[tokenId] = uri;
        emit MetadataUpdate(tokenId);
    }

    function setBaseURI(string calldata uri) external {
        baseUri = uri;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    function setContractURI(string calldata uri) external {
        contractURI = uri;
    }

    /// As setContractURI, announced (ERC-7572).
    function updateContractURI(string calldata uri) external {
        contractURI = uri;
        emit ContractURIUpdated();
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        if (bytes(uris[tokenId]).length > 0) return uris[tokenId];
        return string.concat(baseUri, Strings.toString(tokenId));
    }

    function supportsInterface(bytes4 id) public view override(ERC721, IERC165) returns (bool) {
        return id == bytes4(0x49064906) || super.supportsInterface(id);
    }
}
