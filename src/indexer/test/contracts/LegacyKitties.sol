// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Pre-standard NFT (CryptoKitties era): Transfer has no indexed arguments,
/// no ERC-165, but ownerOf answers.
contract LegacyKitties {
    event Transfer(address from, address to, uint256 tokenId);

    mapping(uint256 => address) public kittyIndexToOwner;

    function name() external pure returns (bytes32) {
        return "LegacyKitties";
    }

    function symbol() external pure returns (bytes32) {
        return "LK";
    }

    function ownerOf(uint256 tokenId) external view returns (address owner) {
        owner = kittyIndexToOwner[tokenId];
        require(owner != address(0), "no kitty");
    }

    function birth(address to, uint256 tokenId) external {
        require(kittyIndexToOwner[tokenId] == address(0), "exists");
        kittyIndexToOwner[tokenId] = to;
        emit Transfer(address(0), to, tokenId);
    }

    function transfer(address to, uint256 tokenId) external {
        require(kittyIndexToOwner[tokenId] == msg.sender, "not owner");
        kittyIndexToOwner[tokenId] = to;
        emit Transfer(msg.sender, to, tokenId);
    }
}
