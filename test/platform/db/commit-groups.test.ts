import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { CommitGroups } from '../../../src/platform/db/commit-groups.js'
import { isUnavailableError } from '../../../src/platform/db/unavailable.js'

/** Groups whose writes never finish, as on a database that stopped answering without closing its connections. */
function hangingGroups(maxWaitMs?: number) {
  const written: number[][] = []
  const failed: { item: number; error: unknown }[] = []
  const groups = new CommitGroups<number, void>({
    maxInFlight: 1,
    maxGroup: 10,
    ...(maxWaitMs !== undefined && { maxWaitMs }),
    write: (group) => {
      written.push(group)
      return new Promise(() => {})
    },
    settle: () => {},
    fail: (item, error) => failed.push({ item, error }),
  })
  return { groups, written, failed }
}

describe('commit groups behind groups that never finish', () => {
  it('fail the items that waited longer than maxWaitMs as unavailable, and never write them', async () => {
    const { groups, written, failed } = hangingGroups(100)
    groups.add(1)
    await nextTurn()
    groups.add(2)
    groups.add(3)
    await sleep(250)
    groups.add(4)
    await nextTurn()
    assert.deepEqual(written, [[1]], 'only the first group was started')
    assert.deepEqual(
      failed.map(({ item }) => item),
      [2, 3],
      'the two that waited past 100 ms failed; the one just added waits on',
    )
    assert.ok(
      failed.every(({ error }) => isUnavailableError(error)),
      'answered as unavailable (503)',
    )
    await sleep(250)
    assert.deepEqual(
      failed.map(({ item }) => item),
      [2, 3, 4],
    )
  })

  it('keep their items waiting without maxWaitMs', async () => {
    const { groups, failed } = hangingGroups()
    groups.add(1)
    await nextTurn()
    groups.add(2)
    await sleep(150)
    assert.deepEqual(failed, [])
  })
})
