import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { logThrottled, THROTTLE_WINDOW_MS } from '../../src/platform/log-throttle.js'
import { createLogger } from '../../src/platform/logger.js'

function capturingLogger() {
  const lines: Record<string, unknown>[] = []
  return { lines, logger: createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) }) }
}

describe('logThrottled', () => {
  it('writes a condition once a minute; the next line counts the repeats it stands for', () => {
    const { lines, logger } = capturingLogger()
    const log = (nowMs: number) => logThrottled(logger, 'error', 'away', { part: 'node' }, 'the node is away', nowMs)
    assert.equal(log(0), true)
    for (let ms = 1; ms < 10; ms++) assert.equal(log(ms * 1000), false)
    assert.equal(log(THROTTLE_WINDOW_MS - 1), false)
    assert.equal(log(THROTTLE_WINDOW_MS), true)
    assert.equal(log(THROTTLE_WINDOW_MS * 3), true)
    assert.deepEqual(
      lines.map(({ level, msg, part, leftOut }) => ({ level, msg, part, leftOut })),
      [
        { level: 50, msg: 'the node is away', part: 'node', leftOut: undefined },
        { level: 50, msg: 'the node is away', part: 'node', leftOut: 10 },
        { level: 50, msg: 'the node is away', part: 'node', leftOut: undefined },
      ],
    )
  })

  it('keeps conditions and loggers apart', () => {
    const one = capturingLogger()
    const two = capturingLogger()
    assert.equal(logThrottled(one.logger, 'warn', 'a', {}, 'a', 0), true)
    assert.equal(logThrottled(one.logger, 'warn', 'b', {}, 'b', 0), true)
    assert.equal(logThrottled(two.logger, 'warn', 'a', {}, 'a', 0), true)
    assert.equal(logThrottled(one.logger, 'warn', 'a', {}, 'a', 1), false)
    assert.deepEqual(
      one.lines.map((line) => [line.level, line.msg]),
      [
        [40, 'a'],
        [40, 'b'],
      ],
    )
    assert.equal(two.lines.length, 1)
  })
})
