/**
 * Preloaded (`node --import`) into the processes `npm start` runs: the
 * orchestrator (by the npm script) and its indexer, web and portal-build
 * children. When the process that started this one is gone — even killed
 * with SIGKILL, which leaves it no chance to stop its children — this process
 * is re-parented; it then stops itself as on SIGTERM (its own handler, a
 * graceful stop), so nothing is left running on its own.
 *
 * The parent is NFT_PARENT_PID when the parent set it (closing the window in
 * which the parent dies before this module runs), else the parent at load.
 * Plain JavaScript: the indexer runs from its bundle, without tsx.
 */
const announced = Number(process.env.NFT_PARENT_PID)
// Not inherited: a grandchild watches its own parent.
delete process.env.NFT_PARENT_PID
const parent = Number.isInteger(announced) && announced > 1 ? announced : process.ppid

// Linux and macOS re-parent an orphan to PID 1 or a subreaper; process.ppid is read afresh each time.
if (parent > 1) {
  const watch = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(watch)
      process.kill(process.pid, 'SIGTERM')
    }
  }, 250)
  // The watch never keeps the process alive by itself.
  watch.unref()
}
