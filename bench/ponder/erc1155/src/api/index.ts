import { Hono } from 'hono'

// Ponder requires an API file; the bench only uses Ponder's built-in /ready and /status.
export default new Hono()
