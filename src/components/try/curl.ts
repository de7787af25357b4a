function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/** The request as a curl command line, with the demo token or a placeholder for a key. */
export function curlCommand(method: 'GET' | 'HEAD', absoluteUrl: string, token: string | undefined): string {
  return `curl ${method === 'HEAD' ? '-I' : '-i'} ${shellQuote(absoluteUrl)} \\\n  -H ${shellQuote(
    `Authorization: Bearer ${token ?? '$NFT_API_KEY'}`,
  )}`
}
