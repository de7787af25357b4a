/**
 * PostgreSQL's plan of a statement, as a flat list of its nodes, for tests
 * that assert which index a query reads (EXPLAIN, not EXPLAIN ANALYZE: the
 * statement is planned with the session's settings and not run).
 */
import type { Queryable } from '@/indexer/store/db'

export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  /** The index scan's bounds and conditions, as EXPLAIN prints them. */
  'Index Cond'?: string
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
