'use client'

import type { Connector } from 'wagmi'
import { DEV_WALLET_NAME } from './dev-wallet'
import type { WalletChoices as Choices } from './use-wallet-choices'

function connectorLabel(connector: Connector): string {
  return connector.name === 'Injected' ? 'Browser wallet' : connector.name
}

function WalletButton({
  connector,
  label,
  disabled,
  onChoose,
}: {
  connector: Connector
  label: string
  disabled: boolean
  onChoose: (connector: Connector) => void
}) {
  return (
    <button
      type="button"
      className="button wallet-button"
      disabled={disabled}
      onClick={() => onChoose(connector)}
    >
      {connector.icon?.startsWith('data:image/') ? (
        // biome-ignore lint/performance/noImgElement: a wallet's EIP-6963 data: icon, nothing to optimise
        <img src={connector.icon} alt="" width={20} height={20} />
      ) : null}
      {label}
    </button>
  )
}

/** The wallets found in this browser, guidance when there is none, and the devnet's dev wallet. */
export function WalletChoices({
  choices,
  busy,
  onChoose,
}: {
  choices: Choices
  busy: boolean
  onChoose: (connector: Connector) => void
}) {
  if (!choices.ready) {
    return (
      <p className="muted" role="status">
        Looking for wallets…
      </p>
    )
  }
  return (
    <>
      {choices.detected.length === 0 ? (
        <div className="no-wallet" data-testid="no-wallet">
          <p>
            <strong>No wallet found in this browser.</strong> Install a wallet extension — for example{' '}
            MetaMask, Rabby or Coinbase Wallet — or open this page in a mobile wallet’s built-in browser, then
            reload.
          </p>
        </div>
      ) : (
        <div className="wallet-list">
          {choices.detected.map((connector) => (
            <WalletButton
              key={connector.uid}
              connector={connector}
              label={`Sign in with ${connectorLabel(connector)}`}
              disabled={busy}
              onChoose={onChoose}
            />
          ))}
        </div>
      )}
      {choices.devWallet ? (
        <div className="dev-wallet" data-testid="dev-wallet">
          <h3 className="h3">Local devnet</h3>
          <p className="help">
            This service runs its own development chain. The development wallet signs in with the devnet’s
            first funded account, from this page — no extension needed. It exists on this devnet only.
          </p>
          <WalletButton
            connector={choices.devWallet}
            label={`Sign in with the ${DEV_WALLET_NAME.toLowerCase()}`}
            disabled={busy}
            onChoose={onChoose}
          />
        </div>
      ) : null}
    </>
  )
}
