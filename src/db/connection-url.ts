/**
 * Session settings carried by a connection URL. A URL can name its schema in
 * two ways, both understood by createPool:
 *   - `?options=-c%20search_path%3D<schema>%2Cpublic` — PostgreSQL's own
 *     startup parameter, so plain `pg`/`psql` clients land in the schema too
 *     (test databases use this, see src/test/db.ts);
 *   - `?schema=<schema>` — Prisma's convention (`prisma migrate deploy`).
 * No Prisma import here: the embedded server and the migrator use it too.
 */

/** The schema a URL names (`schema=` or the first entry of search_path in `options=`). */
export function schemaFromUrl(url: string): string | undefined {
  return schemaFromSettings(splitSessionSettings(url).settings)
}

/**
 * `url` bound to `schema`: the schema goes into the `options` startup parameter
 * (search_path "<schema>, public"), which every PostgreSQL client honours.
 */
export function urlWithSchema(url: string, schema: string): string {
  const { connectionString, settings } = splitSessionSettings(url)
  settings.set('search_path', searchPathFor(schema))
  // Percent-encoded by hand: URLSearchParams would write spaces as '+', which libpq (psql) keeps literally.
  const separator = connectionString.includes('?') ? '&' : '?'
  return `${connectionString}${separator}options=${encodeURIComponent(renderOptions(settings))}`
}

/** public holds the extensions (pg_trgm, btree_gin), so every other schema keeps it on its path. */
export function searchPathFor(schema: string): string {
  return schema === 'public' ? 'public' : `${quoteIdentifier(schema)},public`
}

export function quoteIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`
}

/**
 * Takes the session settings out of a URL (`options=-c k=v …` and Prisma's
 * `schema=`), returning the URL without them. pg lets the connection string
 * override explicit config, so the settings must leave the URL to be merged.
 */
export function splitSessionSettings(url: string): {
  connectionString: string
  settings: Map<string, string>
} {
  const parsed = new URL(url)
  const settings = parseOptions(parsed.searchParams.get('options') ?? '')
  const prismaSchema = parsed.searchParams.get('schema')
  if (prismaSchema && !settings.has('search_path')) settings.set('search_path', searchPathFor(prismaSchema))
  parsed.searchParams.delete('options')
  parsed.searchParams.delete('schema')
  return { connectionString: parsed.toString(), settings }
}

export function schemaFromSettings(settings: Map<string, string>): string | undefined {
  const searchPath = settings.get('search_path')
  if (!searchPath) return undefined
  const first = searchPath.split(',')[0]?.trim() ?? ''
  const unquoted = first.startsWith('"') ? first.slice(1, -1).replaceAll('""', '"') : first
  return unquoted === '' ? undefined : unquoted
}

/** Parses libpq's `options`: `-c name=value` or `--name=value`, backslash escapes spaces. */
export function parseOptions(options: string): Map<string, string> {
  const words: string[] = []
  let word = ''
  let escaped = false
  for (const char of options) {
    if (escaped) {
      word += char
      escaped = false
    } else if (char === '\\') {
      escaped = true
    } else if (/\s/.test(char)) {
      if (word !== '') words.push(word)
      word = ''
    } else {
      word += char
    }
  }
  if (word !== '') words.push(word)

  const settings = new Map<string, string>()
  for (let i = 0; i < words.length; i++) {
    let assignment: string | undefined
    const current = words[i] ?? ''
    if (current === '-c') assignment = words[++i]
    else if (current.startsWith('-c')) assignment = current.slice(2)
    else if (current.startsWith('--')) assignment = current.slice(2)
    const eq = assignment?.indexOf('=') ?? -1
    if (assignment !== undefined && eq > 0) {
      settings.set(assignment.slice(0, eq).replaceAll('-', '_'), assignment.slice(eq + 1))
    }
  }
  return settings
}

export function renderOptions(settings: Map<string, string>): string {
  return [...settings]
    .map(([name, value]) => `-c ${name}=${value.replaceAll('\\', '\\\\').replaceAll(' ', '\\ ')}`)
    .join(' ')
}
