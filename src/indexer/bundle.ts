/**
 * How the indexer process is started, by `npm start` and by the benchmark alike.
 *
 * It runs from one file that esbuild bundles from `process-entry.ts` before the start
 * (`.build/indexer.mjs`; not minified, so stack traces stay readable), not
 * through tsx, whose loader makes every start seconds slower: a standby that
 * takes over from a crashed indexer, or a restart after a deploy, is that much
 * sooner back at work.
 *
 * Memory: the live data is small (the decoded logs of a few ranges, each read
 * twice for verification, and one commit's parameters), but V8 lets the heap
 * grow toward its limit before it collects, so peak RSS reflects garbage, not
 * need. A young generation larger than V8's default lets a decoded eth_getLogs
 * response die young instead of being promoted; the old-space limit keeps peak
 * RSS under 400 MB with both reads of a range in memory at once. The figures
 * behind both values: docs/indexer.md, "Running".
 */
import path from 'node:path'

export const INDEXER_SOURCE = 'src/indexer/process-entry.ts'
export const INDEXER_BUNDLE = '.build/indexer.mjs'
export const INDEXER_NODE_ARGS = [
  '--max-old-space-size=192',
  '--max-semi-space-size=32',
  '--enable-source-maps',
]

/** Bundles the indexer under `root` and returns the node arguments that run it. */
export async function buildIndexer(root: string): Promise<string[]> {
  const outfile = path.join(root, INDEXER_BUNDLE)
  await bundleForNode(root, path.join(root, INDEXER_SOURCE), outfile)
  return [...INDEXER_NODE_ARGS, outfile]
}

/** One ES module for node from a TypeScript entry point, with the project's path aliases. */
export async function bundleForNode(root: string, entryPoint: string, outfile: string): Promise<void> {
  const { build } = await import('esbuild')
  await build({
    entryPoints: [entryPoint],
    outfile,
    tsconfig: path.join(root, 'tsconfig.json'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // A native addon loads its binary from its own package folder: left to node_modules.
    external: ['sharp'],
    // Bundled CommonJS dependencies (pg, pino) still call require(); the helper is named apart
    // from createRequire, which a bundled ES module may import itself.
    banner: {
      js: "import { createRequire as createBundleRequire } from 'node:module'; const require = createBundleRequire(import.meta.url);",
    },
    logLevel: 'warning',
  })
}
