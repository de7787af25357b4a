import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileContracts } from './compile'

let workDir: string

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'compile-test-'))
  await writeFile(
    path.join(workDir, 'Label.sol'),
    'pragma solidity ^0.8.24;\nlibrary Label { function prefix() internal pure returns (string memory) { return "no. "; } }\n',
  )
  await writeFile(
    path.join(workDir, 'Counter.sol'),
    [
      'pragma solidity ^0.8.24;',
      'import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";',
      'import "./Label.sol";',
      'contract Counter {',
      '  uint256 public count;',
      '  function increment() external { count += 1; }',
      '  function describe() external view returns (string memory) { return string.concat(Label.prefix(), Strings.toString(count)); }',
      '}',
    ].join('\n'),
  )
})

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true })
})

describe('compileContracts', () => {
  it('compiles with node_modules and relative imports, then answers from the cache', async () => {
    const cacheDir = path.join(workDir, 'cache')
    const first = await compileContracts([path.join(workDir, 'Counter.sol')], { cacheDir })
    expect(Object.keys(first)).toEqual(['Counter'])
    expect(first.Counter!.bytecode).toMatch(/^0x6080/)
    expect(first.Counter!.abi.map((item) => ('name' in item ? item.name : item.type)).sort()).toEqual([
      'count',
      'describe',
      'increment',
    ])
    const cached = await readdir(cacheDir)
    expect(cached).toHaveLength(1)

    // The second call reads the cache and does not compile: a mark put in the cached file comes back.
    const cacheFile = path.join(cacheDir, cached[0]!)
    const marked = { Counter: { ...first.Counter!, bytecode: `${first.Counter!.bytecode}00` } }
    await writeFile(cacheFile, JSON.stringify(marked))
    const second = await compileContracts([path.join(workDir, 'Counter.sol')], { cacheDir })
    expect(second).toEqual(marked)
  }, 60_000)

  it('compiles again when an imported file changes', async () => {
    const cacheDir = path.join(workDir, 'cache-invalidation')
    const before = await compileContracts([path.join(workDir, 'Counter.sol')], { cacheDir })
    await writeFile(
      path.join(workDir, 'Label.sol'),
      'pragma solidity ^0.8.24;\nlibrary Label { function prefix() internal pure returns (string memory) { return "#"; } }\n',
    )
    const after = await compileContracts([path.join(workDir, 'Counter.sol')], { cacheDir })
    expect(after.Counter!.bytecode).not.toEqual(before.Counter!.bytecode)
    expect(await readdir(cacheDir)).toHaveLength(2)
  }, 60_000)

  it('throws with the compiler message on an error', async () => {
    const broken = path.join(workDir, 'Broken.sol')
    await writeFile(
      broken,
      'pragma solidity ^0.8.24;\ncontract Broken { function f() external { undefinedThing(); } }\n',
    )
    await expect(compileContracts([broken], { cacheDir: path.join(workDir, 'cache') })).rejects.toThrow(
      /Undeclared identifier/,
    )
  }, 60_000)
})
