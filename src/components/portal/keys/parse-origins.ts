import { MAX_ALLOWED_ORIGINS, parseOrigin } from '@/lib/origins'

/** Parses the origins textarea: one origin per line (or comma separated); errors name the bad line. */
export function parseOrigins(text: string): { origins: string[]; error?: string } {
  const origins: string[] = []
  for (const raw of text.split(/[\n,]/)) {
    const value = raw.trim()
    if (!value) continue
    const parsed = parseOrigin(value)
    if ('problem' in parsed) return { origins, error: `“${value}” ${parsed.problem}` }
    if (!origins.includes(parsed.origin)) origins.push(parsed.origin)
  }
  if (origins.length > MAX_ALLOWED_ORIGINS)
    return { origins, error: `At most ${MAX_ALLOWED_ORIGINS} origins per key (${origins.length} given).` }
  return { origins }
}
