/**
 * The developer portal end to end, in Chromium, with a wallet that signs with
 * a real key: sign in; create a key and read its secret from the page; call
 * the API with it from the test process; rotate (old secret 401, new 200);
 * revoke (401); see the four events in the audit trail; sign out (the old
 * cookie stops working). "Sign out everywhere" ends another client's session
 * of the same wallet too. Another wallet signed in in the same tab sees
 * nothing the first one's pages had loaded.
 */
import { readFileSync } from 'node:fs'
import { type APIRequestContext, request as playwrightRequest } from '@playwright/test'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { createKeyInPortal } from './helpers/portal'
import { getNonce, siweMessage, submitSignIn } from './helpers/siwe'
import { E2E_WALLET_NAME, injectWallet } from './helpers/wallet'

/** An authenticated read from the test process (a server, so no Origin header). */
async function statusWith(api: APIRequestContext, secret: string): Promise<number> {
  const res = await api.get('/v1/indexer/status', { headers: { Authorization: `Bearer ${secret}` } })
  return res.status()
}

test('sign in, create, use, rotate and revoke a key, read the audit trail, sign out', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(90_000)
  const api = await playwrightRequest.newContext({ baseURL })
  const account = privateKeyToAccount(generatePrivateKey())
  const wallet = await injectWallet(page, { signer: account })

  // ── sign in ──
  await page.goto('/portal')
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await expect(page.getByTestId('signed-in-address')).toHaveAttribute('title', account.address.toLowerCase())
  expect(wallet.calls).toContain('personal_sign')
  const session = (await page.context().cookies()).find((c) => c.name === 'next-auth.session-token')
  expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' })

  // ── create ──
  await page.getByRole('button', { name: 'Create key' }).first().click()
  const create = page.getByRole('dialog', { name: 'Create an API key' })
  await expect(create.getByLabel('Name')).toBeFocused()
  await create.getByRole('button', { name: 'Create key' }).click()
  await expect(create.getByText('Give the key a name')).toBeVisible()
  await create.getByLabel('Name').fill('e2e backend')
  await create.getByRole('button', { name: 'Create key' }).click()
  const reveal = page.getByRole('dialog', { name: 'Your new API key' })
  await expect(reveal.getByText('It will not be shown again')).toBeVisible()
  const secret = await reveal.getByTestId('new-secret').inputValue()
  expect(secret.length).toBeGreaterThan(32)
  await page.screenshot({ path: `${SCREENSHOTS}/portal-new-secret.png` })
  await reveal.getByRole('button', { name: 'I have stored the secret' }).click()

  const row = page.getByTestId('key-row').filter({ hasText: 'e2e backend' })
  await expect(row).toBeVisible()
  const prefix = ((await row.getByTestId('key-prefix').textContent()) ?? '').replace(/…$/, '')
  expect(prefix.length).toBeGreaterThan(4)
  expect(secret.startsWith(prefix)).toBe(true)
  expect(await statusWith(api, secret)).toBe(200)
  // "Last used" follows the API call.
  await expect(async () => {
    await page.reload()
    await expect(row.locator('td[data-label="Last used"]')).not.toContainText('never', { timeout: 1_000 })
  }).toPass({ timeout: 20_000 })
  await page.screenshot({ path: `${SCREENSHOTS}/portal-keys.png`, fullPage: true })

  // ── rotate, the old secret stopping now ──
  await row.getByRole('button', { name: 'Rotate e2e backend' }).click()
  const rotate = page.getByRole('dialog', { name: 'Rotate “e2e backend”' })
  await expect(rotate.getByRole('radio', { name: /^Now/ })).toBeChecked()
  await page.screenshot({ path: `${SCREENSHOTS}/portal-rotate.png` })
  await rotate.getByRole('button', { name: 'Rotate key' }).click()
  const rotated = page.getByRole('dialog', { name: 'The new secret' })
  const newSecret = await rotated.getByTestId('new-secret').inputValue()
  expect(newSecret).not.toBe(secret)
  await rotated.getByRole('button', { name: 'I have stored the secret' }).click()
  await expect.poll(() => statusWith(api, secret), { timeout: 5_000 }).toBe(401)
  expect(await statusWith(api, newSecret)).toBe(200)

  // ── revoke ──
  await row.getByRole('button', { name: 'Revoke e2e backend' }).click()
  const revoke = page.getByRole('dialog', { name: 'Revoke “e2e backend”?' })
  await revoke.getByRole('button', { name: 'Revoke key' }).click()
  await expect(page.getByRole('table', { name: 'Revoked keys' }).getByText('e2e backend')).toBeVisible()
  await expect.poll(() => statusWith(api, newSecret), { timeout: 5_000 }).toBe(401)

  // ── audit trail: the four events, newest first ──
  await page.getByRole('link', { name: 'Audit trail' }).click()
  await expect(page.getByRole('heading', { name: 'Audit trail', level: 1 })).toBeVisible()
  const rows = page.getByTestId('audit-row')
  await expect(rows).toHaveCount(4)
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')))).toEqual([
    'key_revoked',
    'key_rotated',
    'key_created',
    'sign_in',
  ])
  for (const tr of await rows.all()) {
    await expect(tr.locator('td[data-label="IP address"]')).not.toHaveText('—')
    await expect(tr.locator('td[data-label="User agent"]')).toContainText('Chrome')
  }
  await expect(rows.nth(1).locator('td[data-label="Key"]')).toContainText(newSecret.slice(0, 8))
  await page.screenshot({ path: `${SCREENSHOTS}/portal-audit.png`, fullPage: true })

  // ── the export: the same four events as a file, streamed by /api/portal/audit-export ──
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSON' }).click(),
  ])
  expect(download.suggestedFilename()).toMatch(/^audit-.*\.json$/)
  const exported = JSON.parse(readFileSync((await download.path())!, 'utf8')) as { action: string }[]
  expect(exported.map((e) => e.action)).toEqual(['key_revoked', 'key_rotated', 'key_created', 'sign_in'])

  // ── the same pages on a phone ──
  await page.setViewportSize({ width: 390, height: 844 })
  await page.screenshot({ path: `${SCREENSHOTS}/portal-audit-mobile.png`, fullPage: true })
  await page.getByRole('link', { name: 'API keys' }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await page.screenshot({ path: `${SCREENSHOTS}/portal-keys-mobile.png`, fullPage: true })
  await page.setViewportSize({ width: 1280, height: 720 })

  // ── sign out: a copy of the cookie taken before stops working too ──
  const cookie = (await page.context().cookies()).find((c) => c.name === 'next-auth.session-token')!
  const copied = await playwrightRequest.newContext({
    baseURL,
    extraHTTPHeaders: { Cookie: `${cookie.name}=${cookie.value}` },
  })
  expect((await copied.get('/api/trpc/keys.list')).status()).toBe(200)
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Sign in with your wallet' })).toBeVisible()
  expect(await (await page.request.get('/api/auth/session')).json()).toEqual({})
  expect((await page.context().cookies()).some((c) => c.name === 'next-auth.session-token')).toBe(false)
  expect((await page.request.get('/api/trpc/keys.list')).status()).toBe(401)
  expect((await copied.get('/api/trpc/keys.list')).status()).toBe(401)
  await Promise.all([api.dispose(), copied.dispose()])
})

test('sign out everywhere ends every session of the wallet', async ({ page, baseURL }) => {
  const account = privateKeyToAccount(generatePrivateKey())
  await injectWallet(page, { signer: account })
  await page.goto('/portal')
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()

  // The same wallet signed in from another client (another browser, a script).
  const elsewhere = await playwrightRequest.newContext({ baseURL })
  const message = siweMessage(await getNonce(elsewhere), account)
  expect((await submitSignIn(elsewhere, message, await account.signMessage({ message }))).error).toBeNull()
  expect((await elsewhere.get('/api/trpc/keys.list')).status()).toBe(200)

  // The confirmation's default keeps the sessions.
  await page.getByRole('button', { name: 'Sign out everywhere' }).click()
  const confirm = page.getByRole('dialog', { name: 'Sign out everywhere?' })
  await expect(confirm.getByRole('button', { name: 'Stay signed in' })).toBeFocused()
  await page.screenshot({ path: `${SCREENSHOTS}/portal-sign-out-everywhere.png` })
  await confirm.getByRole('button', { name: 'Stay signed in' }).click()
  await expect(confirm).toBeHidden()
  expect((await elsewhere.get('/api/trpc/keys.list')).status()).toBe(200)

  await page.getByRole('button', { name: 'Sign out everywhere' }).click()
  await confirm.getByRole('button', { name: 'Sign out everywhere' }).click()
  await expect(page.getByRole('heading', { name: 'Sign in with your wallet' })).toBeVisible()
  // The other client's session has ended too (the check is made on every request: no wait).
  expect((await elsewhere.get('/api/trpc/keys.list')).status()).toBe(401)
  expect(await (await elsewhere.get('/api/auth/session')).json()).toEqual({})

  // Signed in again, the trail shows what happened, newest first.
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await page.getByRole('link', { name: 'Audit trail' }).click()
  const rows = page.getByTestId('audit-row')
  await expect(rows).toHaveCount(4)
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')))).toEqual([
    'sign_in',
    'sign_out_everywhere',
    'sign_in',
    'sign_in',
  ])
  await expect(rows.nth(1)).toContainText('Signed out everywhere')
  await expect(rows.nth(1)).toContainText('2 sessions ended')
  await elsewhere.dispose()
})

test("another wallet signed in in the same tab sees none of the first wallet's keys or trail", async ({
  page,
}) => {
  const first = privateKeyToAccount(generatePrivateKey())
  await injectWallet(page, { signer: first })
  await page.goto('/portal')
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  const name = `first wallet ${Date.now()}`
  await createKeyInPortal(page, name)
  await expect(page.getByTestId('key-row').filter({ hasText: name })).toBeVisible()
  await page.getByRole('link', { name: 'Audit trail' }).click()
  await expect(page.getByTestId('audit-row').filter({ hasText: name })).toHaveCount(1)
  await page.getByRole('link', { name: 'API keys' }).click()
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()

  // The development wallet, without reloading the tab.
  await page.getByRole('button', { name: 'Sign in with the development wallet' }).click()
  await expect(page.getByTestId('signed-in-address')).not.toHaveAttribute(
    'title',
    first.address.toLowerCase(),
  )
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await expect(page.getByText(name)).toHaveCount(0)
  await page.getByRole('link', { name: 'Audit trail' }).click()
  await expect(page.getByTestId('audit-row').first()).toBeVisible()
  await expect(page.getByText(name)).toHaveCount(0)
})
