import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createLogger } from '../../src/platform/logger.js'
import { lookAtEach, type PeriodicTask, startPeriodicTask } from '../../src/platform/periodic-task.js'

const HOUR_MS = 3_600_000
/** Long enough for a run that was wrongly scheduled at once to have started. */
const SETTLE_MS = 50

interface Run {
  finish(more?: boolean): void
  fail(error: Error): void
}

/** A task whose runs end only when the test says so, counting how many run at the same time. */
function controlledTask() {
  const runs: Run[] = []
  let active = 0
  let maxActive = 0
  const run = () =>
    new Promise<boolean>((resolve, reject) => {
      active += 1
      maxActive = Math.max(maxActive, active)
      runs.push({
        finish: (more = false) => {
          active -= 1
          resolve(more)
        },
        fail: (error) => {
          active -= 1
          reject(error)
        },
      })
    })
  return {
    run,
    runs,
    get maxActive() {
      return maxActive
    },
  }
}

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = []
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, lines }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(1)
  }
}

describe('startPeriodicTask', () => {
  let task: PeriodicTask | undefined
  let pending: Run[] = []
  afterEach(async () => {
    // A test that failed midway may leave a run open; ending it lets stop() return.
    for (const run of pending) run.finish()
    await task?.stop()
    task = undefined
  })

  function start(intervalMs: number, run: () => Promise<boolean>, logger = capturedLogger().logger): PeriodicTask {
    task = startPeriodicTask('test-task', intervalMs, run, logger)
    return task
  }

  it('runs at once when started, then waits for the interval', async () => {
    const controlled = controlledTask()
    pending = controlled.runs
    start(HOUR_MS, controlled.run)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    controlled.runs[0]?.finish(false)
    await sleep(SETTLE_MS)
    assert.equal(controlled.runs.length, 1, 'no second run before the interval')
  })

  it('runs again at once when a run reports more work', async () => {
    const controlled = controlledTask()
    pending = controlled.runs
    start(HOUR_MS, controlled.run)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    controlled.runs[0]?.finish(true)
    await until(() => controlled.runs.length === 2, 'the second run starts')
  })

  it('never starts a run while one is in progress, however often it is woken', async () => {
    const controlled = controlledTask()
    pending = controlled.runs
    const started = start(HOUR_MS, controlled.run)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    for (let wakes = 0; wakes < 5; wakes++) started.wake()
    await sleep(SETTLE_MS)
    assert.equal(controlled.runs.length, 1, 'no run starts beside the one in progress')

    controlled.runs[0]?.finish(false)
    await until(() => controlled.runs.length === 2, 'the run the wakes asked for starts')
    await sleep(SETTLE_MS)
    assert.equal(controlled.runs.length, 2, 'the wakes during one run ask for one more run, not one each')
    assert.equal(controlled.maxActive, 1)
  })

  it('runs again after a run during which it was woken, even when that run had no more work', async () => {
    const controlled = controlledTask()
    pending = controlled.runs
    const started = start(HOUR_MS, controlled.run)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    started.wake()
    controlled.runs[0]?.finish(false)
    await until(() => controlled.runs.length === 2, 'the woken run starts')
  })

  it('runs at once when woken while idle', async () => {
    const controlled = controlledTask()
    pending = controlled.runs
    const started = start(HOUR_MS, controlled.run)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    controlled.runs[0]?.finish(false)
    await sleep(SETTLE_MS)
    started.wake()
    await until(() => controlled.runs.length === 2, 'the woken run starts')
  })

  /** What a task whose first run fails with `error` logs, once it has run again on its interval. */
  async function logsOfAFailedRun(error: Error): Promise<Array<Record<string, unknown>>> {
    const controlled = controlledTask()
    pending = controlled.runs
    const { logger, lines } = capturedLogger()
    start(20, controlled.run, logger)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    controlled.runs[0]?.fail(error)
    await until(() => controlled.runs.length === 2, 'the task runs again')
    return lines
  }

  it('logs a failing run as a warning and runs again on its interval', async () => {
    const lines = await logsOfAFailedRun(new Error('database is down'))
    assert.equal(lines.length, 1)
    const [line] = lines
    assert.equal(line?.level, 40, 'a warning')
    assert.equal(line?.msg, 'background task failed; it will run again')
    assert.equal(line?.task, 'test-task')
    assert.equal((line?.err as { message?: string } | undefined)?.message, 'database is down')
  })

  it('logs a run that failed on a database at one of its limits (a full disk) as an error, and runs again', async () => {
    const lines = await logsOfAFailedRun(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))
    assert.deepEqual(
      lines.map((line) => [line.level, line.msg, line.task]),
      [[50, 'background task failed: the database is at one of its limits', 'test-task']],
    )
  })

  it('stop waits for the run in progress, and nothing runs after it', async () => {
    const controlled = controlledTask()
    pending = controlled.runs
    const started = start(20, controlled.run)
    await until(() => controlled.runs.length === 1, 'the first run starts')
    started.wake()
    let stopped = false
    const stopping = started.stop().then(() => {
      stopped = true
    })
    await sleep(SETTLE_MS)
    assert.equal(stopped, false, 'stop has not returned while the run is in progress')

    // More work and a pending wake would both run the task again at once, were it not stopped.
    controlled.runs[0]?.finish(true)
    await stopping
    started.wake()
    await sleep(SETTLE_MS)
    assert.equal(controlled.runs.length, 1)
  })
})

describe('lookAtEach', () => {
  const logger = createLogger('silent')
  /** Looks that end only when `release` is called, counting how many are under way at once. */
  const heldLooks = () => {
    const held: Array<() => void> = []
    let active = 0
    let maxActive = 0
    const look = (item: number) =>
      new Promise<void>((resolve, reject) => {
        active += 1
        maxActive = Math.max(maxActive, active)
        held.push(() => {
          active -= 1
          if (item < 0) reject(Object.assign(new Error('database away'), { code: 'ECONNREFUSED' }))
          else resolve()
        })
      })
    return { look, held, maxActive: () => maxActive }
  }

  it('looks at `together` items at once, and at the rest as those end', async () => {
    const looks = heldLooks()
    const done = lookAtEach([1, 2, 3, 4, 5], looks.look, logger, () => ({}), 3)
    await sleep(SETTLE_MS)
    assert.equal(looks.held.length, 3, 'three looks under way, not one after another')
    looks.held[0]?.()
    await sleep(SETTLE_MS)
    assert.equal(looks.held.length, 4, 'the next item as soon as one ended')
    for (const release of looks.held.slice(1)) release()
    await sleep(SETTLE_MS)
    for (const release of looks.held.slice(4)) release()
    await done
    assert.equal(looks.maxActive(), 3)
  })

  it('begins no further look once the database is away, and fails the run only when the looks under way have ended', async () => {
    const looks = heldLooks()
    let settled = false
    const done = lookAtEach([-1, 2, 3, 4], looks.look, logger, () => ({}), 2).finally(() => {
      settled = true
    })
    done.catch(() => {})
    await sleep(SETTLE_MS)
    looks.held[0]?.()
    await sleep(SETTLE_MS)
    assert.equal(settled, false, 'a look is still under way: a stop now would close the database under it')
    assert.equal(looks.held.length, 2, 'no look began after the failure')
    looks.held[1]?.()
    await assert.rejects(done, /database away/)
    assert.equal(looks.held.length, 2, 'the items after the failure were not looked at')
  })
})
