// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestNFT} from "./TestNFT.sol";

/// Creates TestNFT collections from inside a contract call (CREATE and CREATE2), so
/// the collection's creator is this factory and its deploying transaction has no
/// contractAddress in its receipt: only trace_block shows the creation.
contract TestFactory {
    event Created(address indexed collection);

    /// Deploys a collection with CREATE and mints `quantity` tokens from id 1 to `to`.
    function create(string calldata name_, string calldata symbol_, address to, uint256 quantity)
        external
        returns (TestNFT nft)
    {
        nft = new TestNFT(name_, symbol_, "");
        nft.mintBatch(to, 1, quantity);
        emit Created(address(nft));
    }

    /// The same with CREATE2.
    function create2(string calldata name_, string calldata symbol_, address to, uint256 quantity, bytes32 salt)
        external
        returns (TestNFT nft)
    {
        nft = new TestNFT{salt: salt}(name_, symbol_, "");
        nft.mintBatch(to, 1, quantity);
        emit Created(address(nft));
    }

    /// Deploys a collection, mints, then reverts: the creation appears in the trace
    /// (inside a reverted call) but the contract does not exist afterwards.
    function createAndRevert(string calldata name_, string calldata symbol_, address to) external {
        TestNFT nft = new TestNFT(name_, symbol_, "");
        nft.mintBatch(to, 1, 1);
        revert("undone");
    }
}
