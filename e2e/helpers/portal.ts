import { expect, type Page } from '@playwright/test'

/**
 * Creates a key from the keys page — every scope but `uncheck`, allowed origins one per
 * line — and returns its secret (shown once).
 */
export async function createKeyInPortal(
  page: Page,
  name: string,
  options: { uncheck?: string[]; origins?: string } = {},
): Promise<string> {
  await page.getByRole('button', { name: 'Create key' }).first().click()
  const create = page.getByRole('dialog', { name: 'Create an API key' })
  await create.getByLabel('Name').fill(name)
  for (const scope of options.uncheck ?? []) await create.getByLabel(scope).uncheck()
  if (options.origins) await create.getByLabel('Allowed origins (optional)').fill(options.origins)
  await create.getByRole('button', { name: 'Create key' }).click()
  const secret = await page
    .getByRole('dialog', { name: 'Your new API key' })
    .getByTestId('new-secret')
    .inputValue()
  await page.getByRole('button', { name: 'I have stored the secret' }).click()
  await expect(page.getByTestId('key-row').filter({ hasText: name })).toBeVisible()
  return secret
}

/** Signs in with the development wallet and opens the portal's Tokens page. */
export async function openPortalTokens(page: Page): Promise<void> {
  await page.goto('/portal')
  await page.getByRole('button', { name: 'Sign in with the development wallet' }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Tokens' }).click()
  await expect(page.getByRole('heading', { name: 'Tokens', level: 1 })).toBeVisible()
}
