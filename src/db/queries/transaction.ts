/**
 * Statements that must share one transaction. The services (src/server) hold
 * the business rules and run them as `withTransaction(db, async (q) => …)`:
 * `q` holds every transactional query of src/db/queries, bound to that
 * transaction, so a service reads and writes only through those functions.
 * `autocommit(db)` binds the same functions to the plain client, each
 * statement committing on its own (where no transaction is wanted).
 */
import type { Database } from '@/db/database'
import type { Prisma } from '@/db/generated/client'
import { apiKeyStatements } from './api-keys'
import { auditEventStatements } from './audit-events'
import { metadataRefreshStatements } from './metadata-refresh'
import { portalSessionStatements } from './portal-sessions'
import { userStatements } from './users'
import { webhookStatements } from './webhooks'

/** A Prisma transaction client, or the client itself (statements in autocommit). */
export type Tx = Prisma.TransactionClient

/** Query functions whose first parameter is the transaction. */
// biome-ignore lint/suspicious/noExplicitAny: the parameters of any statement
type Statements = Record<string, (tx: Tx, ...args: any[]) => Promise<unknown>>

type Bound<S extends Statements> = {
  [K in keyof S]: S[K] extends (tx: Tx, ...args: infer A) => infer R ? (...args: A) => R : never
}

const statements = {
  apiKeys: apiKeyStatements,
  auditEvents: auditEventStatements,
  metadataRefresh: metadataRefreshStatements,
  portalSessions: portalSessionStatements,
  users: userStatements,
  webhooks: webhookStatements,
}

export type TxQueries = { [G in keyof typeof statements]: Bound<(typeof statements)[G]> }

function bind<S extends Statements>(tx: Tx, group: S): Bound<S> {
  return Object.fromEntries(
    Object.entries(group).map(([name, statement]) => [name, (...args: unknown[]) => statement(tx, ...args)]),
  ) as Bound<S>
}

function bindAll(tx: Tx): TxQueries {
  return {
    apiKeys: bind(tx, statements.apiKeys),
    auditEvents: bind(tx, statements.auditEvents),
    metadataRefresh: bind(tx, statements.metadataRefresh),
    portalSessions: bind(tx, statements.portalSessions),
    users: bind(tx, statements.users),
    webhooks: bind(tx, statements.webhooks),
  }
}

/** Runs `fn` in one interactive transaction (no options: the database's default isolation). */
export function withTransaction<T>(db: Database, fn: (q: TxQueries) => Promise<T>): Promise<T> {
  return db.prisma.$transaction((tx) => fn(bindAll(tx)))
}

/** The transactional queries outside any transaction: each statement commits on its own. */
export function autocommit(db: Database): TxQueries {
  return bindAll(db.prisma)
}
