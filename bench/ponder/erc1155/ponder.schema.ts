import { index, onchainTable, primaryKey } from 'ponder'

// What our indexer keeps for ERC-1155 (docs/database.md): one row per id/value pair of a
// TransferSingle or TransferBatch, balances per (contract, id, owner) and supply per token.
export const transfers = onchainTable(
  'transfers',
  (t) => ({
    id: t.text().primaryKey(),
    collection: t.hex().notNull(),
    tokenId: t.bigint().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    amount: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    batchIndex: t.integer().notNull(),
    transactionHash: t.hex().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({
    tokenIdx: index().on(table.collection, table.tokenId),
    toIdx: index().on(table.to),
  }),
)

export const balances = onchainTable(
  'balances',
  (t) => ({
    collection: t.hex().notNull(),
    tokenId: t.bigint().notNull(),
    owner: t.hex().notNull(),
    balance: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.collection, table.tokenId, table.owner] }),
    ownerIdx: index().on(table.owner, table.collection, table.tokenId),
  }),
)

export const tokens = onchainTable(
  'tokens',
  (t) => ({
    collection: t.hex().notNull(),
    tokenId: t.bigint().notNull(),
    supply: t.bigint().notNull(),
    lastBlock: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.collection, table.tokenId] }),
  }),
)
