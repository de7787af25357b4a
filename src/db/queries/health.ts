/** The database ping of GET /readyz (src/server/services/readiness.ts). */
import type pg from 'pg'

export function pingDatabase(pool: pg.Pool): Promise<unknown> {
  return pool.query('SELECT 1')
}
