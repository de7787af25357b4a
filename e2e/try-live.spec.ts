/**
 * The try-it page's live mode: with a demo token, "Watch live" opens
 * GET /v1/activity/stream and shows the devnet's new transfers as they are
 * indexed, newest first; "Stop" closes it.
 */
import { expect, test } from './helpers/fixtures'

test('watch the activity stream live, then stop it', async ({ page }) => {
  await page.goto('/try')
  const watch = page.getByRole('button', { name: 'Watch live' })
  await expect(watch).toBeDisabled()
  await page.getByRole('button', { name: 'Get a demo token' }).click()
  await expect(page.getByTestId('demo-token')).toHaveText(/^demo_/)

  await watch.click()
  await expect(page.getByTestId('live-status')).toHaveText(/^Live:/, { timeout: 15_000 })
  // The devnet mints and moves tokens every second or two.
  const events = page.getByTestId('live-events').getByRole('listitem')
  await expect(events.first()).toBeVisible({ timeout: 40_000 })
  await expect(events.first()).toHaveText(/(mint|transfer|burn|removed) .+ #\d+ block \d+/)

  await page.getByRole('button', { name: 'Stop' }).click()
  await expect(page.getByRole('button', { name: 'Watch live' })).toBeEnabled()
  await expect(page.getByTestId('live-status')).toHaveText('')
  // What was shown stays on screen.
  await expect(events.first()).toBeVisible()
})
