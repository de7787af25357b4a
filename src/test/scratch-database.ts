/**
 * A database of a run's own on a real PostgreSQL server, so nothing a run does
 * (or finds) in the server's other databases — a `public` schema someone
 * migrated into, say — reaches its tests. Dropped at the end of the run;
 * databases left by a run that crashed are dropped by the next one after a while.
 */
import pg from 'pg'
import { quoteIdentifier } from '@/db/connection-url'
import { newTestSchemaName, testSchemaCreatedAt } from './schema-name'

/** Scratch databases of crashed runs older than this are dropped. */
const STALE_AFTER_MS = 6 * 60 * 60 * 1000

export interface ScratchDatabase {
  url: string
  drop(): Promise<void>
}

async function withAdmin<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl })
  try {
    await client.connect()
  } catch (err) {
    throw new Error(
      `DATABASE_URL is set but the database cannot be reached: ${(err as Error).message || err}`,
    )
  }
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** `<prefix>_<time>_<random>` on the server of `serverUrl`, created empty. */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${newTestSchemaName()}`
  await withAdmin(serverUrl, async (client) => {
    await dropStale(client, prefix)
    await client.query(`CREATE DATABASE ${quoteIdentifier(name)}`)
  })
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  // The first migration creates pg_trgm in public; created here once, so test
  // files migrating their schemas side by side never race to create it.
  await withAdmin(url.toString(), (client) =>
    client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public').then(() => {}),
  )
  return {
    url: url.toString(),
    drop: () =>
      withAdmin(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`).then(() => {}),
      ),
  }
}

async function dropStale(client: pg.Client, prefix: string): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
    [`${prefix}_`],
  )
  for (const { datname } of rows) {
    const createdAt = testSchemaCreatedAt(datname.slice(prefix.length + 1))
    if (createdAt !== undefined && Date.now() - createdAt > STALE_AFTER_MS) {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(datname)} WITH (FORCE)`)
    }
  }
}
