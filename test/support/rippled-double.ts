// A WebSocket server on 127.0.0.1 that speaks rippled's JSON API at the boundary, as xrpl.js's own tests do:
// each request {id, command, ...} gets {id, status, type: 'response', result} or rippled's error shape.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { decode, encode } from 'ripple-binary-codec'
import { type RawData, type WebSocket, WebSocketServer } from 'ws'
import { hashes, unixTimeToRippleTime } from 'xrpl'

export interface TransactionStatus {
  validated: boolean
  ledgerIndex: number
  transactionResult: string
  /** The metadata's delivered_amount (payments): drops, or an issued-currency amount. */
  deliveredAmount?: string | { currency: string; issuer: string; value: string }
  /** When the validated ledger closed (epoch ms), answered as close_time_iso, to the second; absent when not given. */
  closedAtMs?: number
  /**
   * The ledger that holds it while the node's database does not yet: rippled writes a validated ledger's transactions
   * there afterwards. `ledger` lists it in that ledger; `tx` answers as `validated` says.
   */
  unwrittenIn?: number
  /** Its signed blob, for `ledger`'s list, when it was never submitted to this double. */
  txBlob?: string
}

export interface AccountState {
  /** lsfDisableMaster: the account's master key may not sign. */
  disableMaster?: boolean
  regularKey?: string
  signerList?: { quorum: number; entries: Array<{ account: string; weight: number }> }
  /** The account's next Sequence (1 when not given). */
  sequence?: number
  /** The TicketSequence of each Ticket the account holds. */
  tickets?: readonly number[]
}

export interface RippledDouble {
  /** ws://127.0.0.1:<port> */
  url: string
  /** Every tx_blob received by submit, in order. */
  submitted: string[]
  /** Every request received, in order (commands and their parameters). */
  requests: Array<Record<string, unknown>>
  /** The engine result of the following submits (tesSUCCESS until set). */
  setSubmitResult(engineResult: string, engineResultMessage?: string): void
  /**
   * The node's server_state ('full' until set). A node in any other state (syncing, tracking...) relays every local
   * submission to its peers whatever its own result, and says so with broadcast: true, as rippled does.
   */
  setServerState(state: string): void
  /** The network id server_info gives (1, the testnet's, until set; undefined to give none, as older nodes do). */
  setNetworkId(networkId: number | undefined): void
  /** Makes the following submits fail as rippled does before applying, e.g. ('invalidTransaction', 'fails local checks: ...'). */
  setSubmitError(error: string, errorMessage: string): void
  /**
   * Makes an account exist, with the given RegularKey and signer list; unknown accounts answer actNotFound. With
   * `fromLedger`, the state holds from that ledger on: a request for an earlier ledger reads the state set before it
   * (or none). Without, it holds in every ledger.
   */
  setAccount(address: string, state?: AccountState, options?: { fromLedger?: number }): void
  /** The account is deleted in ledger `fromLedger`: it is not in that ledger nor after, until set again. */
  deleteAccount(address: string, options: { fromLedger: number }): void
  /** What `tx` answers for a hash; unknown hashes answer txnNotFound. */
  setTransaction(hash: string, status: TransactionStatus): void
  setValidatedLedgerIndex(ledgerIndex: number): void
  /**
   * The first ledger the node holds (1 until set): it lacks the ledgers before, as a restarted node does, and answers
   * lgrNotFound for a request that names one of them, or one past the validated ledger.
   */
  setHistoryStart(ledgerIndex: number): void
  /**
   * Cuts each ledger's list of transactions short by its last one, as rippled does, without an error, where its node
   * store misses a part of the ledger; the ledger's transaction_hash stays that of the whole list.
   */
  setTransactionListsCut(cut: boolean): void
  /** When each ledger closed (epoch ms), answered by `ledger` as close_time_iso; absent until set. */
  setLedgerCloseTimes(closedAtMs: ((ledgerIndex: number) => number) | undefined): void
  /** Called with each request before it is answered (to change the node between two requests of one look). */
  beforeAnswer(hook: ((request: Record<string, unknown>) => void) | undefined): void
  /** The node goes down: open connections are dropped and new ones refused. */
  stop(): Promise<void>
  /** The node comes back on the same port. */
  start(): Promise<void>
  /** Requests of this command are recorded and never answered (a node slow to answer one kind of request), until released. */
  hold(command: string, held: boolean): void
  /** Open connections stay open but get no answers, and new connections never complete their handshake. */
  setUnresponsive(unresponsive: boolean): void
  close(): Promise<void>
}

const ENGINE_RESULTS: Record<string, { code: number; message: string }> = {
  tesSUCCESS: { code: 0, message: 'The transaction was applied. Only final in a validated ledger.' },
  terQUEUED: { code: -89, message: 'Held until escalated fee drops.' },
  terPRE_SEQ: { code: -92, message: 'Missing/inapplicable prior transaction.' },
  terRETRY: { code: -99, message: 'Retry transaction.' },
  tefMAX_LEDGER: { code: -186, message: 'Ledger sequence too high.' },
  temMALFORMED: { code: -299, message: 'Malformed transaction.' },
  tefPAST_SEQ: { code: -190, message: 'This sequence number has already passed.' },
  tefALREADY: { code: -198, message: 'The exact transaction was already in this ledger.' },
  telINSUF_FEE_P: { code: -394, message: 'Fee insufficient.' },
  tecUNFUNDED_PAYMENT: { code: 104, message: 'Insufficient XRP balance to send.' },
}

const LSF_DISABLE_MASTER = 0x00100000

class RippledErrorReply {
  constructor(
    readonly error: string,
    readonly errorMessage: string,
    readonly errorCode?: number,
    /** Fields rippled adds to the error, such as the ledger an account was not found in. */
    readonly extra: Record<string, unknown> = {},
  ) {}
}

export async function startRippledDouble(): Promise<RippledDouble> {
  const submitted: string[] = []
  const requests: Array<Record<string, unknown>> = []
  /** Each account's states, each from a ledger on, in the order set. */
  const accounts = new Map<string, Array<{ fromLedger: number; state: AccountState | undefined }>>()
  /** The account as the ledger a request names (by number, or the validated one) holds it. */
  const accountIn = (address: string, request: Record<string, unknown>): AccountState | undefined => {
    const ledger = ledgerIndexOf(request)
    return accounts
      .get(address)
      ?.filter(({ fromLedger }) => fromLedger <= ledger)
      .at(-1)?.state
  }
  const transactions = new Map<string, TransactionStatus>()
  let submitReply: { engineResult: string; engineResultMessage: string } | RippledErrorReply = {
    engineResult: 'tesSUCCESS',
    engineResultMessage: ENGINE_RESULTS.tesSUCCESS!.message,
  }
  let validatedLedgerIndex = 1000
  let networkId: number | undefined = 1
  /** The first ledger the node holds: restarted, or keeping little history, it lacks those before. */
  let historyStart = 1
  let unresponsive = false
  let serverState = 'full'
  let ledgerCloseTimes: ((ledgerIndex: number) => number) | undefined
  let transactionListsCut = false
  /** Each blob submitted, by its hash. */
  const blobs = new Map<string, string>()
  let beforeAnswer: ((request: Record<string, unknown>) => void) | undefined
  /** The blobs relayed to peers once already. */
  const relayed = new Set<string>()
  const heldCommands = new Set<string>()
  const hangingSockets = new Set<Socket>()

  const answer = (request: Record<string, unknown>): Record<string, unknown> | RippledErrorReply => {
    switch (request.command) {
      case 'ping':
        return {}
      case 'server_info':
        return {
          info: {
            build_version: '2.4.0',
            complete_ledgers: `${historyStart}-${validatedLedgerIndex}`,
            server_state: serverState,
            ...(networkId === undefined ? {} : { network_id: networkId }),
            validated_ledger: { seq: validatedLedgerIndex, age: 1, base_fee_xrp: 0.00001, reserve_base_xrp: 1, reserve_inc_xrp: 0.2 },
          },
        }
      case 'ledger':
        try {
          return answerLedger(request)
        } catch (error) {
          if (error instanceof RippledErrorReply) return error
          throw error
        }
      case 'submit':
        return answerSubmit(request)
      case 'tx':
        return answerTx(request)
      case 'account_info':
        return answerAccountInfo(request)
      case 'ledger_entry':
        return answerLedgerEntry(request)
      default:
        return new RippledErrorReply('unknownCmd', 'Unknown method.', 32)
    }
  }

  /**
   * The ledger a request names (or the validated one); lgrNotFound for one the node does not hold. Its transactions,
   * when asked for, expanded in binary as API v2 lists them ({tx_blob, hash, meta_blob}), their metadata as rippled
   * writes it (DeliveredAmount only where less than the Amount arrived); or as hashes. In binary, the header is sent as
   * rippled sends it (fillJsonBinary): `closed` and `ledger_data`, the header's binary form, which holds the
   * transaction_hash of the list's tree and the close time; no other field of it.
   */
  const answerLedger = (request: Record<string, unknown>): Record<string, unknown> | RippledErrorReply => {
    const ledgerIndex = ledgerIndexOf(request)
    if (!holds(ledgerIndex)) return LEDGER_NOT_FOUND
    const closedAtMs = ledgerCloseTimes?.(ledgerIndex)
    const ledger: Record<string, unknown> = { ledger_index: ledgerIndex, closed: true }
    if (closedAtMs !== undefined) ledger.close_time_iso = isoSeconds(closedAtMs)
    const reply = { ledger, ledger_hash: ledgerHash(ledgerIndex), ledger_index: ledgerIndex, validated: isValidated(ledgerIndex) }
    // The header alone (a close time) needs no blob; a list of transactions, a blob for each.
    if (request.transactions !== true) return reply
    const listed = [...transactions]
      .filter(([, status]) => status.unwrittenIn === ledgerIndex || (status.validated && status.ledgerIndex === ledgerIndex))
      .map(([hash, status], index) => {
        const txBlob = status.txBlob ?? blobs.get(hash)
        if (txBlob === undefined)
          throw new RippledErrorReply('internal', `the double has no blob for ${hash}: submit it, or set its txBlob`, 73)
        const { Amount } = decode(txBlob) as { Amount?: unknown }
        const { deliveredAmount } = status
        const meta = {
          TransactionIndex: index,
          TransactionResult: status.transactionResult,
          AffectedNodes: [],
          ...(deliveredAmount === undefined || JSON.stringify(deliveredAmount) === JSON.stringify(Amount)
            ? {}
            : { DeliveredAmount: deliveredAmount }),
        }
        return { hash, txBlob, meta }
      })
    const transactionHash = hashes.hashTxTree(
      listed.map(({ txBlob, meta }) => ({ ...decode(txBlob), metaData: meta })) as unknown as Parameters<typeof hashes.hashTxTree>[0],
    )
    const shown = transactionListsCut ? listed.slice(0, -1) : listed
    if (request.expand === true && request.binary === true) {
      reply.ledger = {
        closed: true,
        ledger_data: ledgerHeader(ledgerIndex, transactionHash, closedAtMs),
        transactions: shown.map(({ hash, txBlob, meta }) => ({ tx_blob: txBlob, hash, meta_blob: encode(meta) })),
      }
      return reply
    }
    ledger.transaction_hash = transactionHash
    ledger.transactions = shown.map(({ hash }) => hash)
    return reply
  }

  /**
   * Whether the node holds the ledger: from the history's start to the validated one, and the two after it, its closed
   * and open ledgers, which it answers for as not validated.
   */
  const holds = (ledgerIndex: number): boolean => ledgerIndex >= historyStart && ledgerIndex <= validatedLedgerIndex + 2
  const isValidated = (ledgerIndex: number): boolean => ledgerIndex <= validatedLedgerIndex

  const answerSubmit = (request: Record<string, unknown>): Record<string, unknown> | RippledErrorReply => {
    const txBlob = String(request.tx_blob)
    submitted.push(txBlob)
    if (submitReply instanceof RippledErrorReply) return submitReply
    let txJson: Record<string, unknown>
    try {
      txJson = decode(txBlob) as Record<string, unknown>
    } catch {
      return new RippledErrorReply('invalidTransaction', 'fails local checks: Invalid transaction encoding.')
    }
    const { engineResult, engineResultMessage } = submitReply
    const applied = engineResult.startsWith('tes') || engineResult.startsWith('tec')
    const relays = applied || engineResult === 'terQUEUED' || !['full', 'proposing', 'validating'].includes(serverState)
    const firstRelay = relays && !relayed.has(txBlob)
    if (relays) relayed.add(txBlob)
    return {
      engine_result: engineResult,
      engine_result_code: ENGINE_RESULTS[engineResult]?.code,
      engine_result_message: engineResultMessage,
      tx_blob: txBlob,
      tx_json: txJson,
      accepted: applied || engineResult === 'terQUEUED',
      applied,
      // NetworkOPs::apply relays what applied or queued, and, on a node not in sync, every local submission; the
      // HashRouter lets a transaction be relayed once (a repeat answers broadcast: false).
      broadcast: firstRelay,
      // rippled keeps every blob submitted to it among its local transactions, whatever the result (NetworkOPs.cpp).
      kept: true,
      queued: engineResult === 'terQUEUED',
      open_ledger_cost: '10',
      validated_ledger_index: validatedLedgerIndex,
    }
  }

  const answerTx = (request: Record<string, unknown>): Record<string, unknown> | RippledErrorReply => {
    const hash = String(request.transaction).toUpperCase()
    const status = transactions.get(hash)
    if (status === undefined) return new RippledErrorReply('txnNotFound', 'Transaction not found.', 29)
    if (!status.validated) return { hash, validated: false }
    return {
      hash,
      ledger_index: status.ledgerIndex,
      ledger_hash: ledgerHash(status.ledgerIndex),
      meta: {
        TransactionIndex: 0,
        TransactionResult: status.transactionResult,
        AffectedNodes: [],
        ...(status.deliveredAmount === undefined ? {} : { delivered_amount: status.deliveredAmount }),
      },
      ...(status.closedAtMs === undefined ? {} : { close_time_iso: isoSeconds(status.closedAtMs) }),
      validated: true,
    }
  }

  /** Tickets only, asked for as rippled reads them: {account, ticket_seq}. */
  const answerLedgerEntry = (request: Record<string, unknown>): Record<string, unknown> | RippledErrorReply => {
    const ticket = request.ticket as { account?: unknown; ticket_seq?: unknown } | undefined
    if (typeof ticket?.account !== 'string' || typeof ticket.ticket_seq !== 'number') {
      return new RippledErrorReply('malformedRequest', 'Malformed request.', 31)
    }
    if (!holds(ledgerIndexOf(request))) return LEDGER_NOT_FOUND
    if (!accountIn(ticket.account, request)?.tickets?.includes(ticket.ticket_seq)) {
      return new RippledErrorReply('entryNotFound', 'Entry not found.', 21)
    }
    const node = { Account: ticket.account, Flags: 0, LedgerEntryType: 'Ticket', TicketSequence: ticket.ticket_seq }
    return { node, ledger_index: ledgerIndexOf(request), validated: isValidated(ledgerIndexOf(request)) }
  }

  /**
   * The ledger a request names by number (rippled answers from that ledger; this double holds only the present state,
   * which tests set as of the ledger they ask about), or the validated one.
   */
  const ledgerIndexOf = (request: Record<string, unknown>): number =>
    typeof request.ledger_index === 'number' ? request.ledger_index : validatedLedgerIndex

  const answerAccountInfo = (request: Record<string, unknown>): Record<string, unknown> | RippledErrorReply => {
    const address = String(request.account)
    if (!holds(ledgerIndexOf(request))) return LEDGER_NOT_FOUND
    const state = accountIn(address, request)
    if (state === undefined) {
      const ledgerIndex = ledgerIndexOf(request)
      return new RippledErrorReply('actNotFound', 'Account not found.', 19, {
        ledger_index: ledgerIndex,
        validated: isValidated(ledgerIndex),
      })
    }
    const accountData: Record<string, unknown> = {
      Account: address,
      Balance: '100000000',
      Flags: state.disableMaster ? LSF_DISABLE_MASTER : 0,
      LedgerEntryType: 'AccountRoot',
      OwnerCount: state.signerList ? 1 : 0,
      Sequence: state.sequence ?? 1,
    }
    if (state.regularKey !== undefined) accountData.RegularKey = state.regularKey
    const result: Record<string, unknown> = {
      account_data: accountData,
      ledger_index: ledgerIndexOf(request),
      validated: isValidated(ledgerIndexOf(request)),
    }
    if (request.signer_lists === true) {
      result.signer_lists = state.signerList
        ? [
            {
              LedgerEntryType: 'SignerList',
              SignerQuorum: state.signerList.quorum,
              SignerEntries: state.signerList.entries.map((entry) => ({
                SignerEntry: { Account: entry.account, SignerWeight: entry.weight },
              })),
            },
          ]
        : []
    }
    return result
  }

  const onMessage = (socket: WebSocket, data: RawData) => {
    if (unresponsive) return
    const request = JSON.parse(data.toString()) as Record<string, unknown>
    requests.push(request)
    // Every blob received, answered or held, for `ledger`'s lists.
    if (request.command === 'submit' && typeof request.tx_blob === 'string') {
      try {
        blobs.set(hashes.hashSignedTx(request.tx_blob).toUpperCase(), request.tx_blob)
      } catch {
        // Not a signed transaction: refused when answered.
      }
    }
    if (heldCommands.has(String(request.command))) return
    beforeAnswer?.(request)
    const reply = answer(request)
    const message =
      reply instanceof RippledErrorReply
        ? {
            id: request.id,
            status: 'error',
            type: 'response',
            error: reply.error,
            error_code: reply.errorCode,
            error_message: reply.errorMessage,
            request,
            ...reply.extra,
          }
        : { id: request.id, status: 'success', type: 'response', result: reply }
    socket.send(JSON.stringify(message))
  }

  const wss = new WebSocketServer({ noServer: true })
  wss.on('connection', (socket) => {
    socket.on('message', (data) => onMessage(socket, data))
    // A client that drops mid-frame is the client's problem; the double just lets the socket go.
    socket.on('error', () => socket.terminate())
  })
  const server = createServer((_request, response) => response.writeHead(426).end())
  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (unresponsive) {
      hangingSockets.add(socket)
      socket.on('close', () => hangingSockets.delete(socket))
      return
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request))
  })

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve((server.address() as AddressInfo).port)
      })
    })
  const port = await listen(0)
  let listening = true

  const stop = async () => {
    for (const socket of wss.clients) socket.terminate()
    for (const socket of hangingSockets) socket.destroy()
    if (!listening) return
    listening = false
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  return {
    url: `ws://127.0.0.1:${port}`,
    submitted,
    requests,
    setSubmitResult(engineResult, engineResultMessage) {
      submitReply = { engineResult, engineResultMessage: engineResultMessage ?? ENGINE_RESULTS[engineResult]?.message ?? engineResult }
    },
    setSubmitError(error, errorMessage) {
      submitReply = new RippledErrorReply(error, errorMessage)
    },
    setAccount(address, state = {}, { fromLedger = 0 } = {}) {
      const states = (accounts.get(address) ?? []).filter((held) => held.fromLedger < fromLedger)
      accounts.set(address, [...states, { fromLedger, state }])
    },
    deleteAccount(address, { fromLedger }) {
      const states = (accounts.get(address) ?? []).filter((held) => held.fromLedger < fromLedger)
      accounts.set(address, [...states, { fromLedger, state: undefined }])
    },
    setTransaction(hash, status) {
      transactions.set(hash.toUpperCase(), status)
    },
    setValidatedLedgerIndex(ledgerIndex) {
      validatedLedgerIndex = ledgerIndex
    },
    setHistoryStart(ledgerIndex) {
      historyStart = ledgerIndex
    },
    setTransactionListsCut(cut) {
      transactionListsCut = cut
    },
    setLedgerCloseTimes(closedAtMs) {
      ledgerCloseTimes = closedAtMs
    },
    beforeAnswer(hook) {
      beforeAnswer = hook
    },
    setServerState(state) {
      serverState = state
    },
    setNetworkId(id) {
      networkId = id
    },
    stop,
    async start() {
      if (listening) return
      await listen(port)
      listening = true
    },
    hold(command, held) {
      if (held) heldCommands.add(command)
      else heldCommands.delete(command)
    },
    setUnresponsive(value) {
      unresponsive = value
    },
    async close() {
      await stop()
      wss.close()
    },
  }
}

const LEDGER_NOT_FOUND = new RippledErrorReply('lgrNotFound', 'ledgerNotFound', 21)

/** An ISO time to the second, as rippled's close_time_iso. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

function ledgerHash(ledgerIndex: number): string {
  return ledgerIndex.toString(16).toUpperCase().padStart(64, '0')
}

/**
 * A ledger header in binary, as rippled's addRaw writes it: index, total drops, parent hash, transaction_hash, account
 * hash, parent close time, close time (seconds since the XRP Ledger's epoch; 0 when not given), close time resolution
 * and close flags.
 */
function ledgerHeader(ledgerIndex: number, transactionHash: string, closedAtMs: number | undefined): string {
  const header = Buffer.alloc(118)
  header.writeUInt32BE(ledgerIndex, 0)
  header.writeBigUInt64BE(99_999_999_999_000_000n, 4)
  Buffer.from(ledgerHash(ledgerIndex - 1), 'hex').copy(header, 12)
  Buffer.from(transactionHash, 'hex').copy(header, 44)
  const closeTime = closedAtMs === undefined ? 0 : Math.max(0, unixTimeToRippleTime(closedAtMs))
  header.writeUInt32BE(Math.max(0, closeTime - 4), 108)
  header.writeUInt32BE(closeTime, 112)
  header.writeUInt8(10, 116)
  return header.toString('hex').toUpperCase()
}
