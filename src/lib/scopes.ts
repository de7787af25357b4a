/** The read scopes of the API; keys are issued with these only. */
export const SCOPES = [
  'read:collections',
  'read:nfts',
  'read:owners',
  'read:transfers',
  'read:activity',
  'read:status',
] as const

export type Scope = (typeof SCOPES)[number]
