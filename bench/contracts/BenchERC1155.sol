// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/// OpenZeppelin ERC-1155 for the indexer benchmark: many mints, transfers and burns per
/// transaction. Each operation is one OpenZeppelin _update, so it emits TransferSingle for one
/// id and TransferBatch for several, exactly as the library's own mint/transfer/burn paths do.
contract BenchERC1155 is ERC1155 {
    struct Op {
        address from;
        address to;
        uint256[] ids;
        uint256[] values;
    }

    constructor(string memory uri_) ERC1155(uri_) {}

    /// Applies the operations in order (from = zero: mint; to = zero: burn). No approval
    /// check: the bench's deployer moves holders' tokens, which changes nothing in the events.
    function run(Op[] calldata ops) external {
        for (uint256 i = 0; i < ops.length; i++) _update(ops[i].from, ops[i].to, ops[i].ids, ops[i].values);
    }
}
