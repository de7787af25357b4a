/** Human explanations of the codes the server answers (src/server/portal-auth/siwe.ts). */
const ERRORS: Record<string, string> = {
  MALFORMED_MESSAGE: 'The wallet returned a message the server could not read. Try again.',
  WRONG_DOMAIN: 'The message was written for another site. Sign in from this portal’s own address.',
  WRONG_URI: 'The message names another address than this portal. Sign in from this portal’s own address.',
  WRONG_CHAIN: 'The message is for another chain than the one this service indexes.',
  UNSUPPORTED_VERSION: 'The wallet produced an unsupported Sign-In with Ethereum version.',
  EXPIRED: 'The sign-in request expired before it was signed. Try again.',
  NOT_YET_VALID: 'The sign-in request is not valid yet: check your computer’s clock.',
  NONCE_INVALID: 'This sign-in request was already used or has expired. Try again for a fresh one.',
  BAD_SIGNATURE: 'The signature does not match the wallet address.',
  CHAIN_UNAVAILABLE: 'The chain could not be reached to check the signature. Try again in a moment.',
  DEVNET_ACCOUNT:
    'This is a development account whose key is public: it signs in on the local devnet only. Use your own wallet.',
  RATE_LIMITED: 'Too many sign-in attempts from your network. Wait a minute and try again.',
  // The nonce endpoint's and next-auth's answers when the service itself fails (a database down).
  SERVICE_UNAVAILABLE: 'The service cannot sign you in right now. Try again in a minute.',
  SIGN_IN_FAILED: 'The service could not complete the sign-in. Try again in a minute.',
}

export const GENERIC_SIGN_IN_ERROR = 'Sign-in failed. Try again.'

/** Own entries only: `?error=constructor` is no known code. */
export function knownError(code: string): string | undefined {
  return Object.hasOwn(ERRORS, code) ? ERRORS[code] : undefined
}

/** A sentence for whatever the wallet, the nonce endpoint or next-auth threw. */
export function explainSignInError(err: unknown): string {
  if (err instanceof Error) {
    const known = knownError(err.message)
    if (known) return known
    const name = (err as { name?: string }).name ?? ''
    const short = (err as { shortMessage?: string }).shortMessage
    if (/UserRejected/i.test(name) || /reject|denied/i.test(err.message)) {
      return 'The request was declined in the wallet. Nothing was signed.'
    }
    return short ?? err.message
  }
  return GENERIC_SIGN_IN_ERROR
}
