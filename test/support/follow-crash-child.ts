// Run as a child process by the crash tests (follow-crash, submit-crash): starts the service with its workers on
// DATABASE_URL and XRPL_NODE_URL, approves the signAndSubmit payload PAYLOAD_UUID with SIGNED_BLOB, prints the
// answer's status, and leaves its transaction follower running until it is killed.
import { loadConfig } from '../../src/config.js'
import { startService } from '../../src/main.js'
import { createLogger } from '../../src/platform/logger.js'

const { PAYLOAD_UUID: uuid, SIGNED_BLOB: signedTransaction } = process.env
if (!uuid || !signedTransaction) throw new Error('PAYLOAD_UUID and SIGNED_BLOB are required')

const service = await startService(loadConfig(), { listen: false, logger: createLogger('warn') })
// The test holds stdin open; if the test process dies, this one follows instead of running on.
process.stdin.on('close', () => process.exit(0))
process.stdin.resume()

const response = await service.app.inject({
  method: 'POST',
  url: `/api/v1/sign/${uuid}/approve`,
  payload: { walletAdapter: 'gemwallet', signedTransaction },
})
process.stdout.write(`${response.statusCode}\n`)
