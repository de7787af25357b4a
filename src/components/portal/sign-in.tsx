'use client'

import { useRouter, useSearchParams } from 'next/navigation'
import { signIn } from 'next-auth/react'
import { useEffect, useState } from 'react'
import { createSiweMessage } from 'viem/siwe'
import { type Connector, useConfig, useConnectors } from 'wagmi'
import { connect, disconnect, getConnection, signMessage, switchChain } from 'wagmi/actions'

type Step = 'idle' | 'connect' | 'nonce' | 'sign' | 'verify'

const STEPS: { id: Exclude<Step, 'idle'>; label: string }[] = [
  { id: 'connect', label: 'Connect your wallet' },
  { id: 'nonce', label: 'Get a one-time sign-in request' },
  { id: 'sign', label: 'Sign the message in your wallet' },
  { id: 'verify', label: 'Verify the signature' },
]

/** Human explanations of the codes the server answers (src/server/auth/siwe.ts). */
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
  RATE_LIMITED: 'Too many sign-in attempts from your network. Wait a minute and try again.',
}

/** Own entries only: `?error=constructor` is no known code. */
function knownError(code: string): string | undefined {
  return Object.hasOwn(ERRORS, code) ? ERRORS[code] : undefined
}

function explain(err: unknown): string {
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
  return 'Sign-in failed. Try again.'
}

function connectorLabel(connector: Connector): string {
  return connector.name === 'Injected' ? 'Browser wallet' : connector.name
}

interface NonceResponse {
  nonce: string
  expires_at: string
  domain: string
  uri: string
  chain_id: number
  statement: string
}

export function SignInPanel({ publicUrl }: { publicUrl: string }) {
  const config = useConfig()
  const connectors = useConnectors()
  const router = useRouter()
  // Wallets announce themselves in the browser only: list them after hydration.
  const [mounted, setMounted] = useState(false)
  useEffect(() => setMounted(true), [])
  const [step, setStep] = useState<Step>('idle')
  // next-auth sends refusals of a redirect-based sign-in back here as ?error=CODE.
  const redirectedError = useSearchParams()?.get('error')
  const [error, setError] = useState<string | null>(
    redirectedError ? (knownError(redirectedError) ?? 'Sign-in failed. Try again.') : null,
  )
  const [originMismatch] = useState(
    () => typeof window !== 'undefined' && window.location.origin !== new URL(publicUrl).origin,
  )
  // The generic injected connector is redundant when a wallet announced itself (EIP-6963).
  const wallets = connectors.filter(
    (c, _i, all) =>
      c.id !== 'injected' || all.every((other) => other.type !== 'injected' || other.id === 'injected'),
  )

  async function start(connector: Connector) {
    setError(null)
    try {
      setStep('connect')
      const current = getConnection(config)
      const { accounts, chainId } =
        current.status === 'connected' && current.connector.uid === connector.uid
          ? { accounts: current.addresses, chainId: current.chainId }
          : await connect(config, { connector })
      const address = accounts[0]
      if (!address) throw new Error('The wallet shared no account.')

      setStep('nonce')
      const res = await fetch('/api/siwe/nonce', { method: 'POST' })
      const body = (await res.json()) as NonceResponse & { error?: { code: string } }
      if (!res.ok) throw new Error(body.error?.code ?? 'SIGN_IN_FAILED')

      if (chainId !== body.chain_id) {
        // Ask the wallet to follow; a wallet that cannot still signs for the indexed chain.
        await switchChain(config, { chainId: body.chain_id }).catch(() => undefined)
      }

      setStep('sign')
      const message = createSiweMessage({
        domain: body.domain,
        address,
        statement: body.statement,
        uri: body.uri,
        version: '1',
        chainId: body.chain_id,
        nonce: body.nonce,
        issuedAt: new Date(),
        expirationTime: new Date(body.expires_at),
      })
      const signature = await signMessage(config, { account: address, message, connector })

      setStep('verify')
      const result = await signIn('siwe', { message, signature, redirect: false })
      if (!result?.ok) throw new Error(result?.error ?? 'SIGN_IN_FAILED')
      router.refresh()
    } catch (err) {
      setError(explain(err))
      setStep('idle')
      await disconnect(config).catch(() => undefined)
    }
  }

  const busy = step !== 'idle'
  const activeIndex = STEPS.findIndex((s) => s.id === step)
  return (
    <section className="sign-in" aria-labelledby="sign-in-heading">
      <div className="sign-in-copy">
        <p className="eyebrow">Developer portal</p>
        <h1 id="sign-in-heading">Sign in with your wallet</h1>
        <p className="lead">
          Your wallet is your account: no e-mail, no password. Signing in asks your wallet to sign a short
          Sign-In with Ethereum message. It costs nothing and sends no transaction.
        </p>
        <ul className="checklist">
          <li>Create API keys with exactly the scopes you need</li>
          <li>Rotate a key with a grace period, or revoke it at once</li>
          <li>See every sign-in and key change in your audit trail</li>
        </ul>
        <p className="muted small">
          Smart-contract wallets (ERC-1271) work too: the signature is checked on the indexed chain.
        </p>
      </div>
      <div className="panel sign-in-box">
        {originMismatch ? (
          <p className="alert warn" role="note">
            You opened the portal at {typeof window !== 'undefined' ? window.location.origin : ''}; sign-in
            only works at <a href={`${publicUrl}/portal`}>{publicUrl}</a>.
          </p>
        ) : null}
        <h2 className="h3">Choose a wallet</h2>
        {!mounted ? (
          <p className="muted" role="status">
            Looking for wallets…
          </p>
        ) : wallets.length === 0 ? (
          <p className="muted">
            No browser wallet was found. Install a wallet extension, or open this page in a wallet’s built-in
            browser, then reload.
          </p>
        ) : (
          <div className="wallet-list">
            {wallets.map((connector) => (
              <button
                key={connector.uid}
                type="button"
                className="button wallet-button"
                disabled={busy}
                onClick={() => start(connector)}
              >
                {connector.icon?.startsWith('data:image/') ? (
                  // biome-ignore lint/performance/noImgElement: a wallet's EIP-6963 data: icon, nothing to optimise
                  <img src={connector.icon} alt="" width={20} height={20} />
                ) : null}
                Sign in with {connectorLabel(connector)}
              </button>
            ))}
          </div>
        )}
        <ol className="steps" aria-label="Sign-in progress">
          {STEPS.map((s, i) => (
            <li
              key={s.id}
              className={i < activeIndex ? 'done' : i === activeIndex ? 'active' : ''}
              aria-current={i === activeIndex ? 'step' : undefined}
            >
              {s.label}
            </li>
          ))}
        </ol>
        <p className="visually-hidden" role="status" aria-live="polite">
          {busy ? `${STEPS[activeIndex]?.label ?? ''}…` : ''}
        </p>
        {error ? (
          <p className="alert error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
    </section>
  )
}
