-- A token's total supply and a holder's balance are sums of uint256 values, and can pass
-- 78 digits: nine holders of 2^256 - 1 of one id are valid for a plain OpenZeppelin ERC1155,
-- and a contract that emits events its state does not back can push a balance as far. At 78
-- digits such a commit failed on numeric overflow, every time, and the index stopped there.
-- 155 digits would take 10^77 events to fill (docs/database.md, "ERC-1155"). Raising a
-- numeric's precision rewrites neither table nor index.
ALTER TABLE "tokens" ALTER COLUMN "total_supply" TYPE DECIMAL(155,0);
ALTER TABLE "token_balances" ALTER COLUMN "balance" TYPE DECIMAL(155,0);
