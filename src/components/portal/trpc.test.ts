/** Messages the portal shows for a failed procedure call. */
import { TRPCClientError } from '@trpc/client'
import { describe, expect, it } from 'vitest'
import { errorMessage } from './trpc'

describe('errorMessage', () => {
  it('shows a sentence, not a JSON parser error, when the answer was not the portal’s (a proxy’s page)', () => {
    const proxyPage = new TRPCClientError(`Unexpected token '<', "<html><bod"... is not valid JSON`)
    expect(errorMessage(proxyPage)).toBe('The portal could not reach the service. Try again in a moment.')
  })

  it('keeps the message of a refusal the portal wrote', () => {
    const refusal = new TRPCClientError('allowed_origins: at most 20 origins per key', {
      result: { error: { data: { code: 'BAD_REQUEST' } } } as never,
    })
    expect(errorMessage(refusal)).toBe('allowed_origins: at most 20 origins per key')
  })
})
