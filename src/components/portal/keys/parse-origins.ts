/** Parses the origins textarea: one origin per line (or comma separated); errors name the bad line. */
export function parseOrigins(text: string): { origins: string[]; error?: string } {
  const origins: string[] = []
  for (const raw of text.split(/[\n,]/)) {
    const value = raw.trim()
    if (!value) continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return { origins, error: `“${value}” is not an origin like https://app.example.com` }
    }
    const pathless = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(value)
    if (!/^https?:$/.test(url.protocol) || !pathless || url.username || url.password) {
      return {
        origins,
        error: `“${value}” is not an origin: scheme and host only, like https://app.example.com`,
      }
    }
    if (!origins.includes(url.origin)) origins.push(url.origin)
  }
  return { origins }
}
