/** Allowed origins as the portal's form and the server's check both parse them. */
import { describe, expect, it } from 'vitest'
import { parseOrigin } from './origins'

describe('parseOrigin', () => {
  it('keeps scheme, host and port, in canonical form', () => {
    expect(parseOrigin('https://App.Example.com/')).toEqual({ origin: 'https://app.example.com' })
    expect(parseOrigin('http://localhost:3000')).toEqual({ origin: 'http://localhost:3000' })
    expect(parseOrigin('https://example.com:443')).toEqual({ origin: 'https://example.com' })
  })

  it.each([
    ['https://*.example.com', 'wildcards are not supported'],
    ['*', 'wildcards are not supported'],
    ['https://example.com/app', 'scheme and host only'],
    ['https://user:pw@example.com', 'scheme and host only'],
    ['ftp://example.com', 'scheme and host only'],
    ['example.com', 'is not an origin like'],
    [`https://${'a'.repeat(200)}.com`, 'longer than 200 characters'],
  ])('refuses %s', (text, words) => {
    const parsed = parseOrigin(text)
    expect('problem' in parsed && parsed.problem).toContain(words)
  })
})
