/** What the sign-in box says when the service itself fails: a sentence, never a bare code. */
import { describe, expect, it } from 'vitest'
import { explainSignInError } from './sign-in-errors'

describe('explainSignInError', () => {
  it.each([
    ['SERVICE_UNAVAILABLE', 'The service cannot sign you in right now. Try again in a minute.'],
    ['SIGN_IN_FAILED', 'The service could not complete the sign-in. Try again in a minute.'],
  ])('explains %s', (code, sentence) => {
    expect(explainSignInError(new Error(code))).toBe(sentence)
  })
})
