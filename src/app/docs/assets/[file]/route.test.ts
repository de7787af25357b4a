/** The docs' two renderer files, and a plain 404 for any other name — inherited ones included. */
import { describe, expect, it } from 'vitest'
import { GET } from './route'

const get = (file: string) =>
  GET(new Request(`http://localhost:3000/docs/assets/${file}`), { params: Promise.resolve({ file }) })

describe('GET /docs/assets/[file]', () => {
  it('serves the renderer files', async () => {
    const css = await get('swagger-ui.css')
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await css.arrayBuffer()).byteLength).toBeGreaterThan(1000)
  })

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'package.json', 'index.html'])(
    '%s is not found',
    async (file) => {
      const res = await get(file)
      expect(res.status).toBe(404)
      await res.arrayBuffer()
    },
  )
})
