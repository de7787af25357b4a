/**
 * The database handle a process holds: a pg pool for hot, hand-written SQL
 * and Prisma Client (over the same pool, through the pg driver adapter) for
 * everything else.
 */
import type pg from 'pg'
import { createPool, createPrisma, type PoolOptions } from './client'
import type { PrismaClient } from './generated/client'

export interface Database {
  pool: pg.Pool
  prisma: PrismaClient
  close(): Promise<void>
}

export function openDatabase(url: string, options: PoolOptions = {}): Database {
  const pool = createPool(url, options)
  const prisma = createPrisma(pool)
  return {
    pool,
    prisma,
    async close() {
      await prisma.$disconnect()
      await pool.end()
    },
  }
}
