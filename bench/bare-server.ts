// The baseline for `npm run bench`: a bare Fastify server with no database, no auth, no logging.
import Fastify from 'fastify'

const app = Fastify()
app.get('/bare', async () => ({ uuid: '00000000-0000-4000-8000-000000000000', status: 'pending' }))
app.post('/bare', async (request, reply) => reply.code(201).send({ received: typeof request.body }))
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
const address = app.server.address()
process.stdout.write(`listening on ${typeof address === 'object' && address ? address.port : ''}\n`)
