/**
 * Where the portal's sign-in and sign-out may send the browser: `callbackUrl`
 * is chosen by whoever wrote the link, so every value must end on our own
 * origin — and never in an exception (next-auth answers those with a 500).
 */
import { describe, expect, it } from 'vitest'
import { sameOriginRedirect } from './redirect'

const BASE = 'http://localhost:3000'

describe('sameOriginRedirect', () => {
  it.each([
    ['/portal', 'http://localhost:3000/portal'],
    ['/portal/audit?page=2#top', 'http://localhost:3000/portal/audit?page=2#top'],
    ['http://localhost:3000/try', 'http://localhost:3000/try'],
    ['portal', 'http://localhost:3000/portal'],
  ])('keeps a same-origin target: %s', (url, expected) => {
    expect(sameOriginRedirect(url, BASE)).toBe(expected)
  })

  it.each([
    'https://evil.example/portal',
    '//evil.example/portal',
    '/\\evil.example/portal',
    'http://localhost:3000@evil.example/portal',
    'http://lоcalhost:3000/portal', // Cyrillic о
    'https://localhost:3000/portal', // another scheme is another origin
    'http://localhost:3000.evil.example/portal', // no URL: the port is not a number
    'http://[localhost:3000/portal',
    'http://localhost:99999/portal',
    'http://exa mple.com/',
    'javascript:alert(1)',
  ])('sends anything else to the portal, without throwing: %s', (url) => {
    expect(sameOriginRedirect(url, BASE)).toBe('http://localhost:3000/portal')
  })

  it('answers a header-safe URL (no raw non-ASCII)', () => {
    const target = sameOriginRedirect('/portal?name=ñandú', BASE)
    expect(new URL(target).origin).toBe(BASE)
    expect(target).toMatch(/^[\x21-\x7e]+$/)
  })
})
