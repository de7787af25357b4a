'use client'

import { useState } from 'react'
import { SignInSteps } from './sign-in-steps'
import { useSiweSignIn } from './use-siwe-sign-in'
import { useWalletChoices } from './use-wallet-choices'
import { WalletChoices } from './wallet-choices'

/** Signed out, every portal page is this: what signing in means, and the wallets to do it with. */
export function SignInPanel({ publicUrl }: { publicUrl: string }) {
  const choices = useWalletChoices()
  const { step, busy, error, signInWith } = useSiweSignIn()
  const [originMismatch] = useState(
    () => typeof window !== 'undefined' && window.location.origin !== new URL(publicUrl).origin,
  )
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
        <WalletChoices choices={choices} busy={busy} onChoose={signInWith} />
        <SignInSteps step={step} />
        {error ? (
          <p className="alert error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
    </section>
  )
}
