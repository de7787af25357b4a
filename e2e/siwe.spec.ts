/**
 * Sign-In with Ethereum: a smart-contract wallet (ERC-1271) signs in through
 * the page; replayed nonces, messages for another domain, chain or time,
 * wrong signatures and cross-site portal calls are refused.
 */
import { request as playwrightRequest } from '@playwright/test'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { deployContractWallet } from './helpers/devnet'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { getNonce, politely, siweMessage, submitSignIn } from './helpers/siwe'
import { E2E_WALLET_NAME, injectWallet } from './helpers/wallet'

test('a smart-contract wallet signs in through ERC-1271', async ({ page }) => {
  const owner = privateKeyToAccount(generatePrivateKey())
  const contract = await deployContractWallet(owner.address)

  await injectWallet(page, { signer: owner, address: contract })
  await page.goto('/portal')
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await expect(page.getByTestId('signed-in-address')).toHaveAttribute('title', contract.toLowerCase())

  await page.getByRole('link', { name: 'Audit trail' }).click()
  const row = page.getByTestId('audit-row').first()
  await expect(row).toHaveAttribute('data-action', 'sign_in')
  await expect(row).toContainText('ERC-1271')
})

test.describe('refused sign-ins', () => {
  test('a replayed nonce is refused', async ({ baseURL }) => {
    const api = await playwrightRequest.newContext({ baseURL })
    const account = privateKeyToAccount(generatePrivateKey())
    const message = siweMessage(await getNonce(api), account)
    const signature = await account.signMessage({ message })
    expect(await submitSignIn(api, message, signature)).toEqual({ status: 200, error: null })
    const session = await (await politely(() => api.get('/api/auth/session'))).json()
    expect(session.user.address).toBe(account.address.toLowerCase())

    // The very same message and signature again, from a fresh client.
    const replay = await playwrightRequest.newContext({ baseURL })
    expect(await submitSignIn(replay, message, signature)).toEqual({ status: 401, error: 'NONCE_INVALID' })
    expect(await (await politely(() => replay.get('/api/auth/session'))).json()).toEqual({})
    await Promise.all([api.dispose(), replay.dispose()])
  })

  test('a message for another domain, URI, chain or time is refused', async ({ baseURL }) => {
    const api = await playwrightRequest.newContext({ baseURL })
    const account = privateKeyToAccount(generatePrivateKey())
    const cases = [
      { overrides: { domain: 'evil.example', uri: 'https://evil.example/portal' }, error: 'WRONG_DOMAIN' },
      { overrides: { uri: 'https://evil.example/portal' }, error: 'WRONG_URI' },
      { overrides: { chainId: 1 }, error: 'WRONG_CHAIN' },
      { overrides: { expirationTime: new Date(Date.now() - 1000) }, error: 'EXPIRED' },
    ] as const
    for (const { overrides, error } of cases) {
      const message = siweMessage(await getNonce(api), account, overrides)
      const signature = await account.signMessage({ message })
      expect(await submitSignIn(api, message, signature), error).toEqual({ status: 401, error })
    }
    // A signature by another key than the message's address.
    const other = privateKeyToAccount(generatePrivateKey())
    const message = siweMessage(await getNonce(api), account)
    expect(await submitSignIn(api, message, await other.signMessage({ message }))).toEqual({
      status: 401,
      error: 'BAD_SIGNATURE',
    })
    // An invented nonce.
    const invented = siweMessage({ ...(await getNonce(api)), nonce: 'a1b2c3d4e5f6a7b8' }, account)
    expect(await submitSignIn(api, invented, await account.signMessage({ message: invented }))).toEqual({
      status: 401,
      error: 'NONCE_INVALID',
    })
    expect(await (await politely(() => api.get('/api/auth/session'))).json()).toEqual({})
    await api.dispose()
  })

  test('portal procedures need a session and refuse other origins', async ({ baseURL }) => {
    const api = await playwrightRequest.newContext({ baseURL })
    expect((await api.get('/api/trpc/keys.list')).status()).toBe(401)
    const account = privateKeyToAccount(generatePrivateKey())
    const message = siweMessage(await getNonce(api), account)
    expect((await submitSignIn(api, message, await account.signMessage({ message }))).error).toBeNull()

    expect((await api.get('/api/trpc/keys.list')).status()).toBe(200)
    const body = { name: 'csrf', scopes: ['read:status'], allowed_origins: [] }
    const crossSite = await api.post('/api/trpc/keys.create', {
      data: body,
      headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' },
    })
    expect(crossSite.status()).toBe(403)
    const form = await api.post('/api/trpc/keys.create', {
      form: { name: 'csrf' },
      headers: { Origin: new URL(baseURL!).origin },
    })
    expect(form.status()).toBe(415)
    // Public /v1 procedures are never reachable with a session cookie.
    expect((await api.get('/api/trpc/indexer.status')).status()).toBe(404)
    await api.dispose()
  })
})

test('the sign-in page', async ({ page }) => {
  await injectWallet(page, { signer: privateKeyToAccount(generatePrivateKey()) })
  await page.goto('/portal')
  await expect(page.getByRole('heading', { name: 'Sign in with your wallet' })).toBeVisible()
  await page.screenshot({ path: `${SCREENSHOTS}/portal-sign-in.png`, fullPage: true })
})

test('a redirected sign-in error shows its sentence, and an unknown code the generic one', async ({
  page,
}) => {
  // The page's own alert, not Next.js's route announcer (also role=alert).
  const alert = page.getByRole('main').getByRole('alert')
  await page.goto('/portal?error=BAD_SIGNATURE')
  await expect(alert).toHaveText('The signature does not match the wallet address.')
  // Names every object inherits are no error codes.
  for (const code of ['constructor', 'toString', '__proto__']) {
    await page.goto(`/portal?error=${code}`)
    await expect(alert).toHaveText('Sign-in failed. Try again.')
  }
})
