// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// A minimal smart-contract wallet for the portal's browser tests: it accepts
/// (ERC-1271) exactly the signatures its owner key makes over the given hash.
contract E2EContractWallet {
    bytes4 private constant MAGIC_VALUE = 0x1626ba7e;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError error, ) = ECDSA.tryRecover(hash, signature);
        return error == ECDSA.RecoverError.NoError && signer == owner ? MAGIC_VALUE : bytes4(0xffffffff);
    }
}
