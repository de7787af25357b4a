import { index, onchainTable, primaryKey } from 'ponder'

// The same two things our indexer keeps: every transfer, and each token's current owner.
export const transfers = onchainTable(
  'transfers',
  (t) => ({
    id: t.text().primaryKey(),
    collection: t.hex().notNull(),
    tokenId: t.bigint().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    transactionHash: t.hex().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({
    tokenIdx: index().on(table.collection, table.tokenId),
    toIdx: index().on(table.to),
  }),
)

export const tokens = onchainTable(
  'tokens',
  (t) => ({
    collection: t.hex().notNull(),
    tokenId: t.bigint().notNull(),
    owner: t.hex().notNull(),
    lastBlock: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.collection, table.tokenId] }),
    ownerIdx: index().on(table.owner),
  }),
)
