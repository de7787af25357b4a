/** The server's check of a key's allowed origins refuses what the portal's form refuses, as 400. */
import { describe, expect, it } from 'vitest'
import { ApiError } from '@/server/errors/api-error'
import { normalizeOrigin } from './api-keys'

describe('normalizeOrigin', () => {
  it('stores the canonical origin', () => {
    expect(normalizeOrigin('https://App.Example.com/')).toBe('https://app.example.com')
  })

  it('refuses a wildcard pattern, which the URL parser would take for a host', () => {
    const refused = (() => {
      try {
        normalizeOrigin('https://*.example.com')
      } catch (err) {
        return err
      }
    })()
    expect(refused).toBeInstanceOf(ApiError)
    expect((refused as ApiError).code).toBe('INVALID_ARGUMENT')
    expect((refused as ApiError).message).toContain('wildcards are not supported')
  })
})
