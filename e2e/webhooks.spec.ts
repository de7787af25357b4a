/**
 * The portal's webhooks page (docs/portal.md, "Webhooks") against the whole
 * service on its own devnet: sign in with the development wallet, create a
 * key and an endpoint pointing at a receiver on 127.0.0.1 (allow-listed by
 * the global setup), see the signing secret once, see a delivery of the
 * devnet's activity in the log — its signature verified with the secret by
 * the typed client's verifyWebhook — and redeliver it with the same
 * webhook-id; axe finds nothing serious at 1280 and 390 px.
 */
import http from 'node:http'
import { verifyWebhook } from '../src/client/webhooks'
import { seriousViolations } from './helpers/axe'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

interface Received {
  headers: http.IncomingHttpHeaders
  body: string
}

test('create an endpoint, see its secret once, a delivery in the log, and redeliver it', async ({ page }) => {
  test.setTimeout(180_000)
  const received: Received[] = []
  const port = Number(process.env.E2E_WEBHOOK_PORT)
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve))
  try {
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto('/portal')
    await page.getByRole('button', { name: 'Sign in with the development wallet' }).click()
    await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
    // A key of our own for the endpoint.
    await page.getByRole('button', { name: 'Create key' }).first().click()
    const create = page.getByRole('dialog', { name: 'Create an API key' })
    await create.getByLabel('Name').fill('webhooks e2e')
    await create.getByRole('button', { name: 'Create key' }).click()
    const reveal = page.getByRole('dialog', { name: 'Your new API key' })
    await reveal.getByRole('button', { name: 'I have stored the secret' }).click()

    await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Webhooks' }).click()
    await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible()
    // A private address without the allow-list is refused with its reason.
    await page.getByLabel('URL').fill('https://10.0.0.1/hook')
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await expect(page.getByTestId('webhook-error')).toContainText('Refused 10.0.0.1 (private)')

    await page.getByLabel('URL').fill(`http://127.0.0.1:${port}/hook`)
    await page.getByLabel('Token standard').selectOption('all')
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    const secretField = page.getByTestId('webhook-secret')
    await expect(secretField).toBeVisible()
    const secret = await secretField.inputValue()
    expect(secret).toMatch(/^whsec_/)
    await page.screenshot({ path: `${SCREENSHOTS}/webhooks-secret.png`, fullPage: true })
    await page.getByRole('button', { name: 'I have stored the secret' }).click()
    // Shown once: gone from the page, only its prefix is listed.
    await expect(page.getByTestId('webhook-secret')).toHaveCount(0)
    const row = page.getByTestId('webhook-row').filter({ hasText: `127.0.0.1:${port}` })
    await expect(row).toContainText(secret.slice(0, 12))
    await expect(row).toContainText('(ERC-721 and ERC-1155)')
    await expect(page.getByText(secret)).toHaveCount(0)

    // The devnet's continuous activity reaches the receiver, signed.
    await expect.poll(() => received.length, { timeout: 90_000 }).toBeGreaterThan(0)
    const first = received[0]!
    const event = verifyWebhook(first.body, first.headers as Record<string, string>, secret)
    expect(first.headers['webhook-id']).toBe(event.id)
    // A standard was named: every event carries its amount, ERC-721 ones "1".
    expect((event as { data: { amount?: string } }).data.amount).toMatch(/^[1-9][0-9]*$/)

    await row.getByRole('button', { name: 'Deliveries' }).click()
    const log = page.getByTestId('delivery-log')
    const delivered = log.getByTestId('delivery-row').filter({ hasText: event.id }).first()
    await expect(delivered.getByTestId('delivery-status')).toHaveText('delivered', { timeout: 15_000 })
    await page.screenshot({ path: `${SCREENSHOTS}/webhooks-log.png`, fullPage: true })
    expect(await seriousViolations(page)).toEqual([])

    const before = received.filter((r) => r.headers['webhook-id'] === event.id).length
    await delivered.getByRole('button', { name: 'Redeliver' }).click()
    await expect
      .poll(() => received.filter((r) => r.headers['webhook-id'] === event.id).length, { timeout: 15_000 })
      .toBe(before + 1)
    const again = received.filter((r) => r.headers['webhook-id'] === event.id).at(-1)!
    expect(again.body).toBe(first.body)
    expect(verifyWebhook(again.body, again.headers as Record<string, string>, secret).id).toBe(event.id)
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: `${SCREENSHOTS}/webhooks-narrow.png`, fullPage: true })
  } finally {
    await new Promise((resolve) => receiver.close(resolve))
  }
})

test('the docs describe the webhooks: the guide section and the reference', async ({ page }) => {
  await page.goto('/docs')
  await expect(page.getByRole('heading', { name: 'Webhooks', level: 2 })).toBeVisible()
  const reference = page.getByTestId('api-reference')
  await expect(reference.locator('.opblock').first()).toBeVisible({ timeout: 20_000 })
  await expect(reference.getByText('activity.added').first()).toBeVisible()
  await expect(reference.getByText('activity.removed').first()).toBeVisible()
})
