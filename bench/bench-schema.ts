/** A fresh, migrated schema on the bench's PostgreSQL server, with a pool bound to it. */
import pg from 'pg'
import { urlWithSchema } from '@/db/connection-url'
import { migrate } from '@/db/migrate'

export const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export async function benchSchema(prefix: string, poolSize = 4) {
  const schema = `${prefix}_${Date.now()}`
  const url = urlWithSchema(serverUrl, schema)
  await migrate(url)
  const pool = new pg.Pool({
    connectionString: serverUrl,
    options: `-c search_path=${schema},public`,
    max: poolSize,
  })
  return { schema, url, pool }
}
