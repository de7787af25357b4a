/**
 * A database session's own settings (what SET, set_config() or the startup
 * packet changed): read, and put back. The embedded database serves every
 * connection from one session, so it saves and restores them per connection
 * (src/dev/postgres.ts).
 */

/** Setting name -> value, as pg_settings shows it. */
export type SessionSettings = Record<string, string>

/** What the embedded database (PGlite) offers for this. */
export interface SettingsSession {
  query<T>(sql: string): Promise<{ rows: T[] }>
  exec(sql: string): Promise<unknown>
}

/** The settings the session changed from their defaults. */
export async function sessionSettings(db: SettingsSession): Promise<SessionSettings> {
  const { rows } = await db.query<{ name: string; setting: string }>(
    "SELECT name, setting FROM pg_settings WHERE source = 'session'",
  )
  return Object.fromEntries(rows.map((row) => [row.name, row.setting]))
}

/** Resets the session, then applies `settings`, in one round trip. */
export async function restoreSessionSettings(db: SettingsSession, settings: SessionSettings): Promise<void> {
  const assignments = Object.entries(settings).map(
    ([name, value]) => `SELECT set_config(${literal(name)}, ${literal(value)}, false);`,
  )
  try {
    await db.exec(`RESET ALL;${assignments.join('')}`)
  } catch {
    // One bad value (e.g. a misspelt option) must not cost the others.
    await db.exec('RESET ALL').catch(() => {})
    for (const statement of assignments) await db.exec(statement).catch(() => {})
  }
}

function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}
