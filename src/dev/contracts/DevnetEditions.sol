// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ERC1155Burnable} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Burnable.sol";
import {ERC1155Supply} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Supply.sol";
import {ERC1155URIStorage} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155URIStorage.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// The devnet's ERC-1155 collection: a dozen editions (ids 1..EDITIONS) held in quantities.
/// uri(id) is `<baseURI>{id}.json`, served by the devnet's metadata helper, which expects the
/// `{id}` placeholder replaced as EIP-1155 says (64 lowercase hex digits). A revised edition gets
/// its own URI (ERC1155URIStorage), which emits the EIP-1155 URI event. The base URI is settable
/// by the owner because the helper's port can change between runs.
contract DevnetEditions is ERC1155, ERC1155Burnable, ERC1155Supply, ERC1155URIStorage, Ownable {
    using Strings for uint256;

    string public constant name = "Devnet Editions";
    string public constant symbol = "EDITION";
    uint256 public constant EDITIONS = 12;

    string private _base;
    mapping(uint256 id => uint256) public revision;

    constructor(address initialOwner, string memory baseURI_)
        ERC1155(string.concat(baseURI_, "{id}.json"))
        Ownable(initialOwner)
    {
        _setBase(baseURI_);
    }

    function mint(address to, uint256 id, uint256 amount) external onlyOwner {
        _requireEdition(id);
        _mint(to, id, amount, "");
    }

    function mintBatch(address to, uint256[] calldata ids, uint256[] calldata amounts) external onlyOwner {
        for (uint256 i = 0; i < ids.length; i++) _requireEdition(ids[i]);
        _mintBatch(to, ids, amounts, "");
    }

    /// Points the edition at a new revision of its metadata: its own URI, announced by a URI event.
    function refreshMetadata(uint256 id) external onlyOwner {
        _requireEdition(id);
        uint256 rev = ++revision[id];
        _setURI(id, string.concat("{id}.json?v=", rev.toString()));
    }

    function baseURI() external view returns (string memory) {
        return _base;
    }

    /// Moves every URI to a new base; the revised editions' URIs change with it, so each gets a URI event.
    function setBaseURI(string calldata newBaseURI) external onlyOwner {
        _setBase(newBaseURI);
        _setURI(string.concat(newBaseURI, "{id}.json"));
        for (uint256 id = 1; id <= EDITIONS; id++) {
            if (revision[id] > 0) emit URI(uri(id), id);
        }
    }

    /// Collection-level metadata (ERC-7572 convention), served by the same helper.
    function contractURI() external view returns (string memory) {
        return string.concat(_base, "collection.json");
    }

    function uri(uint256 id) public view override(ERC1155, ERC1155URIStorage) returns (string memory) {
        return super.uri(id);
    }

    function _setBase(string memory newBaseURI) private {
        _base = newBaseURI;
        _setBaseURI(newBaseURI);
    }

    function _requireEdition(uint256 id) private pure {
        require(id >= 1 && id <= EDITIONS, "no such edition");
    }

    function _update(address from, address to, uint256[] memory ids, uint256[] memory values)
        internal
        override(ERC1155, ERC1155Supply)
    {
        super._update(from, to, ids, values);
    }
}
