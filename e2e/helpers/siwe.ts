/**
 * Sign-In with Ethereum straight against the service's endpoints, the way the
 * portal's page does it (nonce → EIP-4361 message → signature → next-auth
 * credentials callback), for the refusal tests.
 */
import type { APIRequestContext, APIResponse } from '@playwright/test'
import type { LocalAccount } from 'viem'
import { createSiweMessage, type SiweMessage } from 'viem/siwe'

export interface NonceResponse {
  nonce: string
  expires_at: string
  domain: string
  uri: string
  chain_id: number
  statement: string
}

/**
 * A request retried after its 429's Retry-After, as the specification tells
 * clients to: these tests sign in many times a second from one address, more
 * than the sign-in endpoints' per-address limit allows.
 */
export async function politely(send: () => Promise<APIResponse>): Promise<APIResponse> {
  for (;;) {
    const res = await send()
    if (res.status() !== 429) return res
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers()['retry-after'] ?? 1) * 1000))
  }
}

export async function getNonce(request: APIRequestContext): Promise<NonceResponse> {
  const res = await politely(() => request.post('/api/siwe/nonce'))
  if (!res.ok()) throw new Error(`nonce: ${res.status()} ${await res.text()}`)
  return (await res.json()) as NonceResponse
}

export function siweMessage(
  nonce: NonceResponse,
  account: LocalAccount,
  overrides: Partial<SiweMessage> = {},
) {
  return createSiweMessage({
    domain: nonce.domain,
    address: account.address,
    statement: nonce.statement,
    uri: nonce.uri,
    version: '1',
    chainId: nonce.chain_id,
    nonce: nonce.nonce,
    issuedAt: new Date(),
    expirationTime: new Date(nonce.expires_at),
    ...overrides,
  })
}

/** Posts to next-auth's credentials callback; `error` is the refusal code, null on success. */
export async function submitSignIn(
  request: APIRequestContext,
  message: string,
  signature: string,
): Promise<{ status: number; error: string | null }> {
  const csrf = (await (await politely(() => request.get('/api/auth/csrf'))).json()) as { csrfToken: string }
  const res = await politely(() =>
    request.post('/api/auth/callback/siwe', {
      form: { message, signature, csrfToken: csrf.csrfToken, json: 'true' },
    }),
  )
  const body = (await res.json().catch(() => ({}))) as { url?: string }
  const error = body.url ? new URL(body.url).searchParams.get('error') : 'NO_URL'
  return { status: res.status(), error }
}
