/**
 * PostgreSQL's plan of a statement, as a flat list of its nodes, for tests
 * and benchmarks that assert which index a query reads (`explain`: EXPLAIN,
 * not EXPLAIN ANALYZE: the statement is planned with the session's settings
 * and not run) or what it read when it ran (`explainAnalyze`, `analyzingPool`:
 * EXPLAIN (ANALYZE, BUFFERS), with `rowsRead` and `planBuffers`).
 */
import type pg from 'pg'
import type { Queryable } from '@/indexer/store/db'

export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  /** A function scan's function (its own statement's plan is not in the caller's). */
  'Function Name'?: string
  /** The index scan's bounds and conditions, as EXPLAIN prints them. */
  'Index Cond'?: string
  /** EXPLAIN ANALYZE: rows the node returned, per loop (fractional from PostgreSQL 18). */
  'Actual Rows'?: number
  /** EXPLAIN ANALYZE: times the node ran (0: never executed). */
  'Actual Loops'?: number
  /** EXPLAIN ANALYZE: rows the node read and discarded by its filter, per loop. */
  'Rows Removed by Filter'?: number
  /** EXPLAIN ANALYZE: rows a bitmap heap scan read and discarded on recheck, per loop. */
  'Rows Removed by Index Recheck'?: number
  /** EXPLAIN (ANALYZE, BUFFERS): blocks the node and its children found in shared buffers… */
  'Shared Hit Blocks'?: number
  /** …and read into them. */
  'Shared Read Blocks'?: number
  Plans?: PlanNode[]
}

export function flattenPlan(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(node)
  for (const child of node.Plans ?? []) flattenPlan(child, out)
  return out
}

export async function explain(db: Queryable, sql: string, params?: unknown[]): Promise<PlanNode[]> {
  const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)
  return flattenPlan(rows[0]['QUERY PLAN'][0].Plan)
}

/** A statement's plan as it ran (EXPLAIN (ANALYZE, BUFFERS)). */
export interface AnalyzedPlan {
  /** The plan's nodes, flattened (flattenPlan: the root first). */
  nodes: PlanNode[]
  /** Shared buffers (hit + read) the statement touched: planBuffers of its root. */
  buffers: number
  /** Its execution time (ms), as EXPLAIN ANALYZE measured it. */
  executionMs: number
}

/** Shared buffers (hit + read) a node touched, its children's included: a plan's, from its root. */
export function planBuffers(node: PlanNode): number {
  return (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0)
}

/**
 * The rows an analyzed plan (flattened) read from `relation`: the rows its
 * nodes on it kept and removed by filters and index rechecks, times their loops.
 */
export function rowsRead(nodes: PlanNode[], relation: string): number {
  return nodes
    .filter((n) => n['Relation Name'] === relation)
    .reduce(
      (sum, n) =>
        sum +
        ((n['Actual Rows'] ?? 0) +
          (n['Rows Removed by Filter'] ?? 0) +
          (n['Rows Removed by Index Recheck'] ?? 0)) *
          (n['Actual Loops'] ?? 1),
      0,
    )
}

/** Runs the statement under EXPLAIN (ANALYZE, BUFFERS): its plan as it ran (its rows are not returned). */
export async function explainAnalyze(db: Queryable, sql: string, params?: unknown[]): Promise<AnalyzedPlan> {
  const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)
  const { Plan: root, 'Execution Time': executionMs } = rows[0]['QUERY PLAN'][0]
  return { nodes: flattenPlan(root), buffers: planBuffers(root), executionMs }
}

/**
 * A pool (for `{ pool }`, a ReadDb) that runs every SELECT or WITH statement
 * given to its `query` under explainAnalyze first and records the plan in
 * `plans` (statements given at once: in the order their EXPLAINs finished),
 * then runs it for real on `db` and returns its result. Other statements
 * (transaction control, settings) are run, not recorded.
 */
export function analyzingPool(db: Queryable): { pool: pg.Pool; plans: AnalyzedPlan[] } {
  const plans: AnalyzedPlan[] = []
  const pool = {
    async query(query: string | { text: string; values?: unknown[] }, params?: unknown[]) {
      const [text, values] = typeof query === 'string' ? [query, params] : [query.text, query.values]
      if (/^\s*(SELECT|WITH)/i.test(text)) plans.push(await explainAnalyze(db, text, values))
      return db.query(text, values)
    },
  } as unknown as pg.Pool
  return { pool, plans }
}
