/**
 * First run with no wallet extension: on the embedded devnet (which the e2e
 * service runs) the sign-in offers the development wallet next to plain
 * guidance for installing a wallet; it signs a real SIWE message that the
 * server verifies, and the key created with it answers /v1 calls.
 */
import { request as playwrightRequest } from '@playwright/test'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { createKeyInPortal } from './helpers/portal'

/** anvil's first dev account, the development wallet's. */
const DEV_ACCOUNT = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'

test('no extension: guidance, then the development wallet signs in and a new key answers /v1', async ({
  page,
  baseURL,
}) => {
  await page.goto('/portal')
  const panel = page.getByRole('main')
  await expect(panel.getByTestId('no-wallet')).toContainText('No wallet found in this browser')
  await expect(panel.getByTestId('no-wallet')).toContainText('Install a wallet extension')
  // No button that can only fail ("Provider not found").
  await expect(page.getByRole('button', { name: 'Sign in with Browser wallet' })).toHaveCount(0)
  const devWallet = page.getByRole('button', { name: 'Sign in with the development wallet' })
  await expect(devWallet).toBeVisible()
  await page.screenshot({ path: `${SCREENSHOTS}/portal-sign-in-dev-wallet.png`, fullPage: true })

  await devWallet.click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await expect(page.getByTestId('signed-in-address')).toHaveAttribute('title', DEV_ACCOUNT)

  const name = `first run ${Date.now()}`
  const secret = await createKeyInPortal(page, name)

  const api = await playwrightRequest.newContext({ baseURL })
  const res = await api.get('/v1/collections?limit=1', { headers: { Authorization: `Bearer ${secret}` } })
  expect(res.status()).toBe(200)
  expect((await res.json()).data).toHaveLength(1)
  await api.dispose()

  // The sign-in is in the audit trail like any other, with the devnet account.
  await page.getByRole('link', { name: 'Audit trail' }).click()
  await expect(page.getByTestId('audit-row').filter({ hasText: name })).toHaveAttribute(
    'data-action',
    'key_created',
  )
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Sign in with your wallet' })).toBeVisible()
})

test('a browser wallet is listed by name next to the development wallet', async ({ page }) => {
  const { generatePrivateKey, privateKeyToAccount } = await import('viem/accounts')
  const { E2E_WALLET_NAME, injectWallet } = await import('./helpers/wallet')
  await injectWallet(page, { signer: privateKeyToAccount(generatePrivateKey()) })
  await page.goto('/portal')
  await expect(page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` })).toBeVisible()
  await expect(page.getByRole('button', { name: 'Sign in with the development wallet' })).toBeVisible()
  await expect(page.getByTestId('no-wallet')).toHaveCount(0)
})
