// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Consecutive} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Consecutive.sol";

/// ERC-2309: one ConsecutiveTransfer for a range minted in the constructor, every token's URI under one base.
contract TestConsecutiveURI is ERC721Consecutive {
    string private base;

    constructor(address receiver, uint96 size, string memory base_) ERC721("Range", "RNG") {
        base = base_;
        _mintConsecutive(receiver, size);
    }

    /// ERC-2309 allows up to 250,000 per log (OpenZeppelin's default cap is 5,000).
    function _maxBatchSize() internal pure override returns (uint96) {
        return 250_000;
    }

    function _baseURI() internal view override returns (string memory) {
        return base;
    }
}
