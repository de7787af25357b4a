// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/// An ERC-1155 whose uri(id) is one template with the `{id}` placeholder, the
/// usual layout; setURI overrides one token's URI and emits URI, as
/// ERC1155URIStorage does. mint/mintBatch/burn/burnBatch are free to call (a test
/// contract); transfers keep OpenZeppelin's owner-or-approved-operator rule.
contract TestEditions is ERC1155 {
    mapping(uint256 => string) private overrides;

    constructor(string memory template) ERC1155(template) {}

    function mint(address to, uint256 id, uint256 amount) external {
        _mint(to, id, amount, "");
    }

    function mintBatch(address to, uint256[] calldata ids, uint256[] calldata amounts) external {
        _mintBatch(to, ids, amounts, "");
    }

    function burn(address from, uint256 id, uint256 amount) external {
        _burn(from, id, amount);
    }

    function burnBatch(address from, uint256[] calldata ids, uint256[] calldata amounts) external {
        _burnBatch(from, ids, amounts);
    }

    function setURI(uint256 id, string calldata tokenUri) external {
        overrides[id] = tokenUri;
        emit URI(tokenUri, id);
    }

    function uri(uint256 id) public view override returns (string memory) {
        string memory own = overrides[id];
        return bytes(own).length > 0 ? own : super.uri(id);
    }
}
