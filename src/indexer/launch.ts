/**
 * How the indexer process is started, by `npm start` and by the benchmark alike.
 *
 * Its live data is small (the decoded logs of a few ranges and one commit's
 * parameters), but V8 lets the heap grow toward its default limit before it
 * collects, so peak RSS reflects garbage, not need. A 320 MiB old space keeps
 * the process well under 400 MB without slowing ingestion (docs/indexer.md).
 */
export const INDEXER_ENTRY = 'src/indexer/main.ts'
export const INDEXER_NODE_ARGS = ['--max-old-space-size=320']
