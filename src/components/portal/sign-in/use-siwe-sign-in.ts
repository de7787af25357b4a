'use client'

import { useRouter, useSearchParams } from 'next/navigation'
import { signIn } from 'next-auth/react'
import { useState } from 'react'
import { createSiweMessage } from 'viem/siwe'
import { type Connector, useConfig } from 'wagmi'
import { connect, disconnect, getConnection, signMessage, switchChain } from 'wagmi/actions'
import { explainSignInError, GENERIC_SIGN_IN_ERROR, knownError } from './sign-in-errors'

export type SignInStep = 'idle' | 'connect' | 'nonce' | 'sign' | 'verify'

export const SIGN_IN_STEPS: { id: Exclude<SignInStep, 'idle'>; label: string }[] = [
  { id: 'connect', label: 'Connect your wallet' },
  { id: 'nonce', label: 'Get a one-time sign-in request' },
  { id: 'sign', label: 'Sign the message in your wallet' },
  { id: 'verify', label: 'Verify the signature' },
]

interface NonceResponse {
  nonce: string
  expires_at: string
  domain: string
  uri: string
  chain_id: number
  statement: string
}

/**
 * Sign-In with Ethereum with one wallet: connect, get a nonce, sign the
 * EIP-4361 message built from the server's values, hand it to next-auth.
 */
export function useSiweSignIn() {
  const config = useConfig()
  const router = useRouter()
  const [step, setStep] = useState<SignInStep>('idle')
  // next-auth sends refusals of a redirect-based sign-in back here as ?error=CODE.
  const redirectedError = useSearchParams()?.get('error')
  const [error, setError] = useState<string | null>(
    redirectedError ? (knownError(redirectedError) ?? GENERIC_SIGN_IN_ERROR) : null,
  )

  async function signInWith(connector: Connector) {
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
      // A proxy's HTML error page is no JSON: then the status says what happened.
      const body = (await res.json().catch(() => undefined)) as
        | (NonceResponse & { error?: { code: string } })
        | undefined
      if (!res.ok || !body?.nonce)
        throw new Error(body?.error?.code ?? (res.status >= 500 ? 'SERVICE_UNAVAILABLE' : 'SIGN_IN_FAILED'))

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
      setError(explainSignInError(err))
      setStep('idle')
      await disconnect(config).catch(() => undefined)
    }
  }

  return { step, busy: step !== 'idle', error, signInWith }
}
