// The PostgreSQL webhook part in a process of its own, as run.ts starts it: its load generator then starts as fresh as
// the instances and the receiver, whatever the parts before it left in run.ts's heap. Prints the part's result as JSON.
//   node --import tsx bench/webhooks-postgres.ts <quick: true|false> <events a second> [redis url]
import { benchWebhooksPostgres } from './webhooks.js'

const [quick, eventsPerSecond, redisUrl] = process.argv.slice(2)
const result = await benchWebhooksPostgres(quick === 'true', Number(eventsPerSecond), redisUrl || undefined)
process.stdout.write(JSON.stringify(result))
process.exit(0)
