export interface DemoToken {
  token: string
  expires_at: string
  scopes: string[]
  limits: { requests_per_second: number; requests_per_minute: number; concurrent: number }
}

/** One answer of the API as the page shows it. */
export interface ApiResponse {
  method: string
  url: string
  status: number
  ms: number
  headers: [string, string][]
  body: unknown
  text: string
  /** 1 for a request without a cursor, +1 for each "Next page"; null when it started from a cursor typed or sent again. */
  page: number | null
  /** The parameters sent: "Next page" keeps these filters, whatever the form holds since. */
  params: Record<string, string>
}
