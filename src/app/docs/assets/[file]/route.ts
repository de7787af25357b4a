/**
 * The API reference renderer (swagger-ui-dist, from npm), served by the app
 * itself: the docs never load anything from another host. Only the two files
 * the page uses are served, read once per process.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'

export const dynamic = 'force-static'
// Only the names of generateStaticParams exist: any other is a 404 that Next.js neither
// renders nor writes to its route cache (docs/portal.md, "Docs").
export const dynamicParams = false

// A Map, not an object: a name like `constructor` or `__proto__` must not find anything.
const FILES = new Map([
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui.css', 'text/css; charset=utf-8'],
])

const cache = new Map<string, Buffer>()

export function generateStaticParams() {
  return [...FILES.keys()].map((file) => ({ file }))
}

export async function GET(
  _req: Request,
  { params }: { params: Promise<{ file: string }> },
): Promise<Response> {
  const { file } = await params
  const type = FILES.get(file)
  if (!type) return new Response('Not found', { status: 404 })
  let body = cache.get(file)
  if (!body) {
    body = await readFile(path.join(process.cwd(), 'node_modules', 'swagger-ui-dist', file))
    cache.set(file, body)
  }
  return new Response(new Uint8Array(body), {
    headers: {
      'Content-Type': type,
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
    },
  })
}
