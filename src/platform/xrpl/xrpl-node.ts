// The service's connection to an XRPL node (XRPL_NODE_URL): submission, account lookups (master key, RegularKey,
// signer list), and the checks that follow a transaction to its final outcome.
import { decodeLedgerData } from 'ripple-binary-codec'
import type { AccountInfoResponse, Client, LedgerEntryRequest, ServerInfoResponse } from 'xrpl'
import { loadOnDemand } from '../load-on-demand.js'
import { sameTransaction } from './encode-transaction.js'
import { MAX_NETWORK_ID_WITHOUT_FIELD } from './network-id.js'

/** xrpl.js is loaded with the first node created: a service without XRPL_NODE_URL never loads it. */
const xrpl = () => loadOnDemand<typeof import('xrpl')>('xrpl')

export interface SubmitResult {
  engineResult: string
  engineResultMessage: string
  /** See isAcceptedEngineResult. */
  accepted: boolean
  /**
   * Not accepted, but it may still be applied: rippled keeps every blob submitted to it among its local transactions
   * and applies them again to each new open ledger for a few ledgers (or up to LastLedgerSequence), so a result that
   * can change as the ledger moves on, `ter` (terPRE_SEQ: a sequence gap that closes) or `tel` (telINSUF_FEE_P: a fee
   * the load no longer asks for), may become an applied transaction, and tefALREADY says that the very transaction is in
   * the node's open ledger already (someone submitted it first): it may be validated. Other tem and tef results cannot,
   * unless the node passed the blob on to its peers (`broadcast`): a node that is not in sync with the network relays
   * every local submission whatever its own result (NetworkOPs::apply), and a peer that is in sync may apply it; but
   * not a tefPAST_SEQ, whose Sequence a node behind says is used, and so is in the network ahead of it. (The
   * answer's own `kept` is true for nearly every local submission, whatever its result: it says the node holds the
   * blob, not that it can apply.)
   */
  kept: boolean
  /**
   * The validated ledger's index as the node answered (submit's validated_ledger_index); null if not given. A
   * transaction the node accepted was applied to, or queued on, an open ledger built on that one: its Sequence (or
   * Ticket) was unused there, and no ledger up to it holds the transaction.
   */
  validatedLedgerIndex: number | null
}

/** An amount in a ledger's metadata: drops as a string, or an issued-currency amount. */
export type DeliveredAmount = string | { currency: string; issuer: string; value: string }

export interface ValidationResult {
  /**
   * The hash of the transaction the validated ledger holds: the one looked at, or the same transaction signed otherwise
   * that took its Sequence (or Ticket) in its place (transactionStatusSince). Upper case.
   */
  txHash: string
  /**
   * When the ledger holds the same transaction signed otherwise, in this one's place: that transaction, decoded. Its
   * proof may have resolved another payload already (the caller decides: one ledger transaction, one payload).
   */
  signedOtherwise?: Record<string, unknown>
  /** The final result, from the validated ledger's metadata (tesSUCCESS, tec...). */
  transactionResult: string
  ledgerIndex: number
  /** The metadata's delivered_amount (payments); null when absent or "unavailable". */
  deliveredAmount: DeliveredAmount | null
  /**
   * When the validated ledger closed (epoch ms), as the node says (close_time_iso): consensus time, rounded to the
   * ledger's close time resolution (10 s, at most 120 s). Null when the node says nothing.
   */
  closedAtMs: number | null
}

/** What one look at the ledger says of a submitted transaction. */
export type TransactionStatus =
  | ({ state: 'validated' } & ValidationResult)
  /** The validated ledger has passed the transaction's LastLedgerSequence without it: it can never be applied. */
  | { state: 'dropped'; validatedLedgerIndex: number }
  /**
   * Not (yet) in a validated ledger, and still possible, or not known to be impossible: `missingLedgers` when the
   * validated ledger has passed lastLedgerSequence, but the node lacks some of the ledgers the transaction could be
   * in (a node restarted, or keeping little history). Whether the node has heard of it says nothing more: rippled
   * answers `tx` from its cache for a blob it refused as well as for one in its open ledger.
   */
  | { state: 'pending'; missingLedgers: boolean }

/** Where a transaction sits in its account's order: its Sequence, or the Ticket it uses (Sequence 0, TicketSequence). */
export type SequenceSlot = { sequence: number } | { ticketSequence: number }

/** The slot a transaction takes in its account's order: its Ticket when it uses one (Sequence 0), else its Sequence. */
export function sequenceSlotOf(transaction: { Sequence: number; TicketSequence?: number }): SequenceSlot {
  return transaction.TicketSequence === undefined ? { sequence: transaction.Sequence } : { ticketSequence: transaction.TicketSequence }
}

/** Where a transaction whose slot is used can be: what transactionStatusSince searches. */
export interface UsedSlot {
  account: string
  slot: SequenceSlot
  /** A settled ledger whose state shows the slot used (slotSeen). */
  usedBy: number
  /** The first ledger that can hold the transaction, when known (its slot was seen unused in the one before); else null. */
  earliestLedger: number | null
  /** Epoch ms: a ledger that closed before then cannot hold the transaction. */
  notBeforeMs: number
}

/** A transaction with LastLedgerSequence, for transactionStatusPast. */
export interface PastLastLedger {
  account: string
  slot: SequenceSlot
  lastLedgerSequence: number
  /** Epoch ms: a ledger that closed before then cannot hold the transaction. */
  notBeforeMs: number
}

/** What a wallet without its own ledger connection (a Ledger device) needs to complete a transaction. */
export interface TransactionDefaults {
  /** Drops: the open ledger's base fee times the load factor, with xrpl.js's 20% cushion. */
  fee: string
  /** The account's next sequence number in the current open ledger. */
  sequence: number
  /** The latest validated ledger plus 20 (xrpl.js's autofill offset): about a minute and a half to be validated. */
  lastLedgerSequence: number
  /** Set when the network requires NetworkID in transactions (network ids above 1024). */
  networkId?: number
}

export interface XrplNode {
  /** Submits a signed blob. Throws XrplNodeUnavailableError when the node cannot be reached, times out or refuses service. */
  submit(txBlob: string): Promise<SubmitResult>
  /** Whether, in the latest validated ledger, `signingPubKey` is the RegularKey of `account`. */
  isRegularKey(account: string, signingPubKey: string): Promise<boolean>
  /** Whether `signerAccounts` all sit on the signer list of `account` and their weights reach its quorum. */
  hasSignerQuorum(account: string, signerAccounts: readonly string[]): Promise<boolean>
  /** Whether, in the latest validated ledger, `account` has disabled its master key (lsfDisableMaster); false for an account that does not exist. */
  isMasterKeyDisabled(account: string): Promise<boolean>
  /**
   * The SignerList of `account` in the latest validated ledger: its quorum and weighted entries. Null when the account
   * does not exist; no entries when it has no signer list.
   */
  signerList(account: string): Promise<{ quorum: number; entries: Array<{ account: string; weight: number }> } | null>
  /**
   * `slot` of `account` in a settled ledger (SETTLED_LEDGERS behind the validated one), and that ledger's index. Unused
   * there: no transaction of that slot is in a ledger up to it. Used: one is (transactionStatusSince finds which). The
   * index is null when the account does not exist there (deleted after its transaction applied, it would say nothing of
   * the ledgers before).
   */
  slotSeen(account: string, slot: SequenceSlot): Promise<{ used: boolean; ledgerIndex: number | null }>
  /** The account's Sequence in the latest validated ledger (its next transaction's); null when it does not exist. */
  accountSequence(account: string): Promise<number | null>
  /**
   * One look at a submitted transaction: validated (with its result), dropped (the validated ledger is at or past
   * lastLedgerSequence without it), or still pending. Throws XrplNodeUnavailableError when the node cannot say.
   */
  transactionStatus(txHash: string, lastLedgerSequence: number | null): Promise<TransactionStatus>
  /**
   * One look at a signed transaction (its blob) whose Sequence (or Ticket) the caller saw used in a settled ledger
   * (slotSeen). The first ledger that shows the slot used holds the transaction that used it: validated (with its
   * result, from that ledger's metadata, whether or not the node's database holds it yet) when it is this one, or the
   * same transaction signed otherwise (other signatures, another key of the account: sameTransaction), whose hash the
   * result then carries; dropped when another transaction took the slot, or when the slot was used already in a
   * ledger that closed before `notBeforeMs`; pending with `missingLedgers` while the node lacks a ledger the search
   * reads.
   */
  transactionStatusSince(txBlob: string, since: UsedSlot): Promise<TransactionStatus>
  /**
   * What `byHash` (transactionStatus's look at a transaction with LastLedgerSequence) says, unless it says that a
   * settled ledger has passed LastLedgerSequence (isPastLastLedger). Then the account's Sequence (or Ticket) decides,
   * rather than the node's database, which rippled writes after it lists a ledger as held: unused in a settled ledger
   * at or past LastLedgerSequence, dropped (whatever history the node keeps); used there, as transactionStatusSince
   * finds it, searched from LastLedgerSequence (unused in that ledger, a later one used it: dropped); a settled ledger
   * before LastLedgerSequence (a server behind), pending with missingLedgers. Where the account is not in that ledger
   * (it never existed, or was deleted since), `byHash` stands.
   */
  transactionStatusPast(txBlob: string, past: PastLastLedger, byHash: TransactionStatus): Promise<TransactionStatus>
  /**
   * One look at a signed transaction that the node refused because its Sequence (or Ticket) is used (tefPAST_SEQ): it,
   * or the same transaction signed otherwise, may be what used it. Validated when the validated ledger holds it (by its
   * hash), or when the slot is used in the validated ledger and the first ledger that shows it used holds it or such a
   * copy (transactionStatusSince, from the validated ledger, whose list is whole whether or not the node has written
   * it); dropped when that ledger holds another transaction, or the slot was used before `notBeforeMs`; pending while
   * the slot is unused in the validated ledger (used in the open ledger only, by a transaction not validated yet), or
   * the account is not in it, or the node lacks a ledger the search reads.
   */
  transactionStatusUsed(txBlob: string, used: { account: string; slot: SequenceSlot; notBeforeMs: number }): Promise<TransactionStatus>
  /** Fee, Sequence, LastLedgerSequence (and NetworkID where needed) for a transaction of `account`; null when the account does not exist. */
  transactionDefaults(account: string): Promise<TransactionDefaults | null>
  /** The network's id as the node gives it (server_info's network_id), asked once; undefined when the node does not say. */
  networkId(): Promise<number | undefined>
  close(): Promise<void>
}

export class XrplNodeUnavailableError extends Error {
  override name = 'XrplNodeUnavailableError'
}

export interface XrplNodeOptions {
  /** Bound on connecting and on each request. Default 10 seconds. */
  requestTimeoutMs?: number
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000
/** AccountRoot flag: the account's master key may not sign. */
const LSF_DISABLE_MASTER = 0x00100000
/** As xrpl.js autofills: LastLedgerSequence 20 ledgers ahead, the fee 20% above the current cost. */
const LAST_LEDGER_OFFSET = 20
const FEE_CUSHION = 1.2
/**
 * The ledgers up to a transaction's LastLedgerSequence that the node must hold (complete_ledgers) to call it dropped:
 * 256, the history a rippled node keeps by default (ledger_history), and far more than a LastLedgerSequence set 20
 * ledgers ahead needs. A transaction whose LastLedgerSequence was set further ahead than this could sit in an earlier
 * ledger that the node lacks.
 */
const SEARCHED_LEDGERS = 256
/**
 * How far behind the validated ledger a ledger must be before a miss in it counts. rippled lists a ledger as validated
 * and held (complete_ledgers) as soon as it is accepted, and writes its transactions to its database afterwards, in
 * the background (LedgerMaster::setFullLedger, pendSaveValidated): until then `tx` misses a transaction that ledger
 * holds. A save takes well under a ledger's 3 to 5 seconds; 8 ledgers (some 30 seconds) leave room for a busy node.
 */
export const SETTLED_LEDGERS = 8

/**
 * Whether transactionStatus's look at a transaction with LastLedgerSequence says that a settled ledger has passed it
 * without the transaction in the node's database (dropped, or pending for want of history): what transactionStatusPast
 * then decides from the account.
 */
export function isPastLastLedger(status: TransactionStatus): boolean {
  return status.state === 'dropped' || (status.state === 'pending' && status.missingLedgers)
}

/**
 * Whether a submit result resolves a payload as signed (submitted).
 * - tesSUCCESS: applied to the open ledger. terQUEUED: queued by the node, to be applied when the fee allows.
 * - tec (preliminary): the transaction is in the open ledger and will cost its fee, whatever its final result; the
 *   user cannot retry with this blob, and a second signature would be a second transaction. The final outcome says
 *   what happened.
 * - Any other ter (terPRE_SEQ, terRETRY...) and tel (refused locally: fee too low...): nothing was applied yet, but the
 *   node retries the blob and may apply it later (SubmitResult.kept): the submission stays in doubt. tem (malformed),
 *   tef (cannot apply: past sequence...): nothing reached the ledger, nor will, unless a node out of sync relayed it
 *   (SubmitResult.kept again). The payload stays pending.
 */
export function isAcceptedEngineResult(engineResult: string): boolean {
  return engineResult === 'tesSUCCESS' || engineResult === 'terQUEUED' || engineResult.startsWith('tec')
}

export function createXrplNode(url: string, options: XrplNodeOptions = {}): XrplNode {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  /** Aborted by close(): refuses new requests. */
  const closing = new AbortController()
  // One client, created here and connected on first use; the constructor rejects a URL that is not ws(s)://.
  const client = new (xrpl().Client)(url, { timeout: requestTimeoutMs, connectionTimeout: requestTimeoutMs })
  // After an unexpected close, xrpl.js schedules its own reconnect, which would later close a connection opened
  // meanwhile by the next request. Cancelling it (right after the close handler has scheduled it) leaves
  // reconnection to connectedClient, which connects again on the next request.
  client.on('disconnected', () => queueMicrotask(() => void client.disconnect()))
  let connecting: Promise<void> | undefined

  const connectedClient = async (): Promise<Client> => {
    if (closing.signal.aborted) throw new XrplNodeUnavailableError('The XRPL node connection is closed')
    if (client.isConnected()) return client
    connecting ??= client.connect().finally(() => {
      connecting = undefined
    })
    try {
      await connecting
    } catch (error) {
      throw unavailable(error)
    }
    return client
  }

  /** Runs one request; rippled's own error replies come back as RippledError, every other failure as unavailable. */
  const call = async <T>(send: (connected: Client) => Promise<T>): Promise<T> => {
    const connected = await connectedClient()
    try {
      return await send(connected)
    } catch (error) {
      if (error instanceof xrpl().RippledError) throw error
      throw unavailable(error)
    }
  }

  let knownNetworkId: Promise<number | undefined> | undefined

  const accountInfo = async (account: string, signerLists: boolean) => {
    try {
      return await call((connected) =>
        connected.request({ command: 'account_info', account, ledger_index: 'validated', signer_lists: signerLists }),
      )
    } catch (error) {
      if (rippledErrorCode(error) === 'actNotFound') return null
      throw asUnavailable(error)
    }
  }

  const accountSequence = async (account: string): Promise<number | null> =>
    (await accountInfo(account, false))?.result.account_data.Sequence ?? null

  const signerList = async (account: string) => {
    const response = await accountInfo(account, true)
    if (response === null) return null
    const list = response.result.signer_lists?.[0]
    if (list === undefined) return { quorum: 0, entries: [] }
    return {
      quorum: list.SignerQuorum,
      entries: list.SignerEntries.map(({ SignerEntry }) => ({ account: SignerEntry.Account, weight: SignerEntry.SignerWeight })),
    }
  }

  /** The transaction as a validated ledger holds it; null while no validated ledger does. */
  const lookUpValidated = async (txHash: string): Promise<ValidationResult | null> => {
    try {
      const response = await call((connected) => connected.request({ command: 'tx', transaction: txHash }))
      const { validated, meta, ledger_index: ledgerIndex } = response.result
      if (validated !== true || typeof meta !== 'object' || ledgerIndex === undefined) return null
      return {
        txHash: txHash.toUpperCase(),
        transactionResult: meta.TransactionResult,
        ledgerIndex,
        deliveredAmount: deliveredAmountOf(meta),
        closedAtMs: closedAtMsOf(response.result),
      }
    } catch (error) {
      if (rippledErrorCode(error) === 'txnNotFound') return null
      throw asUnavailable(error)
    }
  }

  /**
   * The latest validated ledger's index, and the ledgers the node holds (server_info's complete_ledgers, such as
   * "32570-62964287,62964290-62964300", or "empty"), in one request.
   */
  const ledgers = async (): Promise<{
    validated: number
    holds: (first: number, last: number) => boolean
    /** The first of the ledgers held without a gap up to `last`; null when `last` is not held. */
    heldFrom: (last: number) => number | null
  }> => {
    let info: ServerInfoResponse['result']['info']
    try {
      info = (await call((connected) => connected.request({ command: 'server_info' }))).result.info
    } catch (error) {
      throw asUnavailable(error)
    }
    const validated = info.validated_ledger?.seq
    if (validated === undefined) throw new XrplNodeUnavailableError('The XRPL node has no validated ledger yet (it is not synced)')
    // Absent from a server that does not say: nothing held.
    const ranges = (typeof info.complete_ledgers === 'string' ? info.complete_ledgers : '').split(',').map((part) => {
      const [from, to] = part.trim().split('-').map(Number)
      return { from: from ?? Number.NaN, to: to ?? from ?? Number.NaN }
    })
    const rangeOf = (last: number) => ranges.find(({ from, to }) => from <= last && to >= last)
    return {
      validated,
      holds: (first, last) => (rangeOf(last)?.from ?? Number.POSITIVE_INFINITY) <= first,
      heldFrom: (last) => rangeOf(last)?.from ?? null,
    }
  }

  /**
   * `slot` of `account` as validated ledger `ledgerIndex` holds it, read from that ledger's state: 'noAccount' when the
   * account is not in it, 'noLedger' when the node lacks that ledger or has not validated it (a server behind answers
   * for its closed or open ledger of that index, with validated false).
   */
  const slotIn = async (
    account: string,
    slot: SequenceSlot,
    ledgerIndex: number,
  ): Promise<'used' | 'unused' | 'noAccount' | 'noLedger'> => {
    const read = async <T extends { result: { validated?: boolean } }>(
      request: () => Promise<T>,
      absent: string,
    ): Promise<T | 'absent' | 'noLedger'> => {
      try {
        const response = await request()
        return response.result.validated === true ? response : 'noLedger'
      } catch (error) {
        const code = rippledErrorCode(error)
        if (code === 'lgrNotFound' || (error as { data?: { validated?: unknown } }).data?.validated === false) return 'noLedger'
        if (code === absent) return 'absent'
        throw asUnavailable(error)
      }
    }
    const info = await read(
      () => call((connected) => connected.request({ command: 'account_info', account, ledger_index: ledgerIndex })),
      'actNotFound',
    )
    if (info === 'noLedger') return 'noLedger'
    if (info === 'absent') return 'noAccount'
    const sequence = info.result.account_data.Sequence
    if ('sequence' in slot) return sequence > slot.sequence ? 'used' : 'unused'
    // A Ticket below the account's Sequence was created (a TicketCreate takes the numbers from it); one at or above
    // may still be.
    if (slot.ticketSequence >= sequence) return 'unused'
    // rippled reads a Ticket as {account, ticket_seq} (LedgerEntry.cpp, parseTicket); xrpl.js types it otherwise.
    const request = { command: 'ledger_entry', ticket: { account, ticket_seq: slot.ticketSequence }, ledger_index: ledgerIndex }
    const ticket = await read(
      () =>
        call((connected) => connected.request(request as unknown as LedgerEntryRequest)) as Promise<{ result: { validated?: boolean } }>,
      'entryNotFound',
    )
    if (ticket === 'noLedger') return 'noLedger'
    return ticket === 'absent' ? 'used' : 'unused'
  }

  const slotSeen = async (account: string, slot: SequenceSlot): Promise<{ used: boolean; ledgerIndex: number | null }> => {
    // The Sequence and the Ticket are read in one settled ledger: what they say holds for every ledger up to it.
    const ledgerIndex = Math.max(1, (await ledgers()).validated - SETTLED_LEDGERS)
    const state = await slotIn(account, slot, ledgerIndex)
    if (state === 'noLedger') throw new XrplNodeUnavailableError(`The XRPL node does not hold ledger ${ledgerIndex}`)
    if (state === 'noAccount') return { used: false, ledgerIndex: null }
    return { used: state === 'used', ledgerIndex }
  }

  /**
   * Validated ledger `ledgerIndex` as the node holds it: its close time and, when asked for, its transactions with
   * their metadata, from the ledger itself, not from the database `tx` reads, which rippled writes afterwards. Null
   * when the node lacks it, has not validated it, or sent a list of transactions that does not hash to the ledger's
   * transaction_hash: rippled cuts the list short, without an error, where its node store misses a part of the ledger
   * (fillJsonTx). In binary, rippled sends the ledger's header as it is hashed (`ledger_data`, fillJsonBinary), with
   * its transaction_hash and close time, and no other field of it.
   */
  const ledgerAt = async (
    ledgerIndex: number,
    transactions: boolean,
  ): Promise<{ closedAtMs: number | null; transactions: ListedTransaction[] } | null> => {
    let result: { validated?: unknown; ledger?: { close_time_iso?: unknown; ledger_data?: unknown; transactions?: unknown } }
    try {
      const request = { command: 'ledger', ledger_index: ledgerIndex, transactions, expand: transactions, binary: transactions } as const
      result = (await call((connected) => connected.request(request))).result as typeof result
    } catch (error) {
      if (rippledErrorCode(error) === 'lgrNotFound') return null
      throw asUnavailable(error)
    }
    if (result.validated !== true || result.ledger === undefined) return null
    const { ledger } = result
    if (!transactions) return { closedAtMs: closedAtMsOf(ledger), transactions: [] }
    const header = ledgerHeaderOf(ledger.ledger_data)
    if (header === null || header.ledgerIndex !== ledgerIndex) return null
    const listed = completeTransactions(ledger.transactions, header.transactionHash)
    return listed === null ? null : { closedAtMs: header.closedAtMs, transactions: listed }
  }

  /**
   * The slot's state in ledger `ledgerIndex`, for a search below `used` (a ledger that shows it used). An account not
   * in that ledger was created since (or deleted, then created again): the first ledger after it that holds the
   * account is read instead. Unused there, it bounds the search as well (no transaction of the slot is in a ledger up
   * to it: an account created again starts at a Sequence, the ledger index, above any of its earlier life's). Used
   * there, or a ledger the node lacks: null, no bound.
   */
  const boundAt = async (account: string, slot: SequenceSlot, ledgerIndex: number, used: number) => {
    const state = await slotIn(account, slot, ledgerIndex)
    if (state === 'noLedger') return null
    if (state !== 'noAccount') return { state, ledgerIndex }
    let absent = ledgerIndex
    let present: { state: 'used' | 'unused'; ledgerIndex: number } = { state: 'used', ledgerIndex: used }
    while (present.ledgerIndex - absent > 1) {
      const middle = Math.floor((absent + present.ledgerIndex) / 2)
      const found = await slotIn(account, slot, middle)
      if (found === 'noLedger') return null
      if (found === 'noAccount') absent = middle
      else present = { state: found, ledgerIndex: middle }
    }
    return present.state === 'unused' ? present : null
  }

  /**
   * The first ledger whose state shows the slot used. The slot is used in `since.usedBy`, and in every ledger after
   * (a Sequence only grows; a used Ticket never comes back). From the ledger before `earliestLedger`, where it was
   * unused, a binary search finds it. Without, the search first steps back from usedBy in doubling steps, within the
   * ledgers the node holds, to a ledger where the slot is unused; 'before' when it reaches one that closed before
   * notBeforeMs with the slot still used. Null when the node lacks a ledger the search reads.
   */
  const firstUsing = async ({ account, slot, usedBy, earliestLedger, notBeforeMs }: UsedSlot): Promise<number | 'before' | null> => {
    let unused = earliestLedger === null ? null : earliestLedger - 1
    let used = usedBy
    // A node behind the one that saw the slot unused says nothing of where it was used.
    if (unused !== null && unused >= used) return null
    // Steps back within the ledgers the node holds: a step past the first of them would end the search short.
    const heldFrom = unused === null ? (await ledgers()).heldFrom(usedBy) : null
    for (let step = 1; unused === null; step *= 2) {
      if (heldFrom === null || used <= heldFrom) return null
      const probe = Math.max(heldFrom, usedBy - step)
      const read = await boundAt(account, slot, probe, used)
      if (read === null) return null
      if (read.state === 'unused') {
        unused = read.ledgerIndex
        break
      }
      const closedAtMs = (await ledgerAt(probe, false))?.closedAtMs ?? null
      if (closedAtMs !== null && closedAtMs < notBeforeMs) return 'before'
      used = probe
    }
    while (used - unused > 1) {
      const read = await boundAt(account, slot, Math.floor((unused + used) / 2), used)
      if (read === null) return null
      if (read.state === 'used') used = read.ledgerIndex
      else unused = read.ledgerIndex
    }
    return used
  }

  return {
    async submit(txBlob) {
      try {
        const response = await call((connected) => connected.request({ command: 'submit', tx_blob: txBlob }))
        const { engine_result: engineResult, engine_result_message: engineResultMessage, broadcast } = response.result
        const validatedLedgerIndex =
          typeof response.result.validated_ledger_index === 'number' ? response.result.validated_ledger_index : null
        const accepted = isAcceptedEngineResult(engineResult)
        // A Sequence a node behind the network says is used is used in the network too: no peer applies tefPAST_SEQ.
        const kept =
          !accepted &&
          (engineResult.startsWith('ter') ||
            engineResult.startsWith('tel') ||
            engineResult === 'tefALREADY' ||
            (broadcast === true && engineResult !== 'tefPAST_SEQ'))
        return { engineResult, engineResultMessage, accepted, kept, validatedLedgerIndex }
      } catch (error) {
        // The node refused the blob before applying it (for example "fails local checks"): a verdict on the
        // transaction, not an outage.
        if (error instanceof xrpl().RippledError && rippledErrorCode(error) === 'invalidTransaction') {
          return {
            engineResult: 'invalidTransaction',
            engineResultMessage: error.message,
            accepted: false,
            kept: false,
            validatedLedgerIndex: null,
          }
        }
        throw asUnavailable(error)
      }
    },

    accountSequence,

    slotSeen,

    async isRegularKey(account, signingPubKey) {
      const response = await accountInfo(account, false)
      return response?.result.account_data.RegularKey === xrpl().deriveAddress(signingPubKey)
    },

    async hasSignerQuorum(account, signerAccounts) {
      const list = await signerList(account)
      if (list === null || list.entries.length === 0) return false
      const weights = new Map(list.entries.map((entry) => [entry.account, entry.weight]))
      let weight = 0
      for (const signer of signerAccounts) {
        const signerWeight = weights.get(signer)
        if (signerWeight === undefined) return false
        weight += signerWeight
      }
      return weight >= list.quorum
    },

    signerList,

    networkId() {
      // A node's network does not change: asked once, and asked again only after a failed ask.
      knownNetworkId ??= call((connected) => connected.request({ command: 'server_info' })).then(
        (response) => response.result.info.network_id,
        (error: unknown) => {
          knownNetworkId = undefined
          throw asUnavailable(error)
        },
      )
      return knownNetworkId
    },

    async isMasterKeyDisabled(account) {
      const response = await accountInfo(account, false)
      const flags = response?.result.account_data.Flags ?? 0
      return (flags & LSF_DISABLE_MASTER) !== 0
    },

    async transactionStatus(txHash, lastLedgerSequence) {
      // The validated ledger is read before the lookup: if the transaction is still missing afterwards, it was
      // missing from every ledger up to that index, including the last one it could enter. Once that index has passed
      // lastLedgerSequence, a miss counts only if the node holds every ledger the transaction could be in (read in the
      // same request, before the lookup, so that the lookup searched them): one without some of them (restarted, or
      // keeping little history) misses a transaction that one of them holds.
      // Passed only once LastLedgerSequence is SETTLED_LEDGERS behind: a miss in a ledger just validated counts for nothing.
      const before = lastLedgerSequence === null ? undefined : await ledgers()
      const passed = before !== undefined && lastLedgerSequence !== null && before.validated - SETTLED_LEDGERS >= lastLedgerSequence
      const searchable = passed && before.holds(Math.max(1, lastLedgerSequence - SEARCHED_LEDGERS + 1), lastLedgerSequence)
      const result = await lookUpValidated(txHash)
      if (result !== null) return { state: 'validated', ...result }
      if (searchable) return { state: 'dropped', validatedLedgerIndex: before.validated }
      return { state: 'pending', missingLedgers: passed }
    },

    async transactionStatusSince(txBlob, since) {
      const { hashes, decode } = xrpl()
      const txHash = hashes.hashSignedTx(txBlob).toUpperCase()
      // The lookup first: a transaction validated after it can only be in a ledger the search then reads (the slot was
      // used in usedBy already, before this look).
      const result = await lookUpValidated(txHash)
      if (result !== null) return { state: 'validated', ...result }
      const first = await firstUsing(since)
      if (first === 'before') return { state: 'dropped', validatedLedgerIndex: since.usedBy }
      const ledger = first === null ? null : await ledgerAt(first, true)
      if (first === null || ledger === null) return { state: 'pending', missingLedgers: true }
      // The transaction that used the slot is in that ledger: this one (which the node's database may not hold yet), the
      // same transaction signed otherwise, or another that took its place.
      const transaction = decode(txBlob)
      const taker =
        ledger.transactions.find((listed) => listed.hash === txHash) ??
        ledger.transactions.find(
          (listed) => listed.transaction.Account === transaction.Account && sameTransaction(listed.transaction, transaction),
        )
      if (taker === undefined) return { state: 'dropped', validatedLedgerIndex: since.usedBy }
      const { TransactionResult } = taker.meta as { TransactionResult?: unknown }
      if (typeof TransactionResult !== 'string') return { state: 'pending', missingLedgers: true }
      return {
        state: 'validated',
        txHash: taker.hash,
        ...(taker.hash === txHash ? {} : { signedOtherwise: taker.transaction }),
        transactionResult: TransactionResult,
        ledgerIndex: first,
        deliveredAmount: deliveredAmountOf({ delivered_amount: deliveredAmountListed(taker) }),
        closedAtMs: ledger.closedAtMs,
      }
    },

    async transactionStatusPast(txBlob, { account, slot, lastLedgerSequence, notBeforeMs }, byHash) {
      if (!isPastLastLedger(byHash)) return byHash
      const seen = await slotSeen(account, slot)
      if (seen.ledgerIndex === null) return byHash
      if (seen.ledgerIndex < lastLedgerSequence) return { state: 'pending', missingLedgers: true }
      // Unused in a ledger at or past the last that could take it: never applied, and never will be.
      if (!seen.used) return { state: 'dropped', validatedLedgerIndex: seen.ledgerIndex }
      // Used there. The transaction can only be in a ledger up to LastLedgerSequence: the slot unused in that one, a
      // later ledger used it, for another transaction; used there, the search starts from it. (An account not in it, or
      // a node without it: from the settled ledger, as without.)
      const atLast = seen.ledgerIndex === lastLedgerSequence ? 'used' : await slotIn(account, slot, lastLedgerSequence)
      if (atLast === 'unused') return { state: 'dropped', validatedLedgerIndex: seen.ledgerIndex }
      const usedBy = atLast === 'used' ? lastLedgerSequence : seen.ledgerIndex
      return this.transactionStatusSince(txBlob, { account, slot, usedBy, earliestLedger: null, notBeforeMs })
    },

    async transactionStatusUsed(txBlob, { account, slot, notBeforeMs }) {
      const { validated } = await ledgers()
      const state = await slotIn(account, slot, validated)
      if (state === 'used')
        return this.transactionStatusSince(txBlob, { account, slot, usedBy: validated, earliestLedger: null, notBeforeMs })
      return { state: 'pending', missingLedgers: state === 'noLedger' }
    },

    async transactionDefaults(account) {
      let serverInfo: ServerInfoResponse
      let accountData: AccountInfoResponse
      try {
        serverInfo = await call((connected) => connected.request({ command: 'server_info' }))
        accountData = await call((connected) => connected.request({ command: 'account_info', account, ledger_index: 'current' }))
      } catch (error) {
        if (rippledErrorCode(error) === 'actNotFound') return null
        throw asUnavailable(error)
      }
      const info = serverInfo.result.info
      const validated = info.validated_ledger
      if (validated === undefined) throw new XrplNodeUnavailableError('The XRPL node has no validated ledger yet (it is not synced)')
      const feeDrops = Math.ceil(validated.base_fee_xrp * 1_000_000 * (info.load_factor ?? 1) * FEE_CUSHION)
      const networkId = info.network_id
      return {
        fee: String(feeDrops),
        sequence: accountData.result.account_data.Sequence,
        lastLedgerSequence: validated.seq + LAST_LEDGER_OFFSET,
        ...(networkId !== undefined && networkId > MAX_NETWORK_ID_WITHOUT_FIELD ? { networkId } : {}),
      }
    },

    async close() {
      closing.abort()
      await client.disconnect()
    },
  }
}

/** A transaction a validated ledger lists, decoded, with its metadata. */
interface ListedTransaction {
  /** Upper case. */
  hash: string
  transaction: Record<string, unknown>
  meta: Record<string, unknown>
}

/**
 * A ledger's transactions, as `ledger` lists them expanded in binary ({tx_blob, meta_blob}, or meta before API v2),
 * when they hash to the ledger's transaction_hash (the root of its transaction tree); null when they do not (a list
 * cut short), or cannot be read.
 */
function completeTransactions(listed: unknown, transactionHash: unknown): ListedTransaction[] | null {
  if (!Array.isArray(listed) || typeof transactionHash !== 'string') return null
  const { decode, hashes } = xrpl()
  const entries: ListedTransaction[] = []
  try {
    for (const entry of listed as Array<{ tx_blob?: unknown; meta_blob?: unknown; meta?: unknown }>) {
      const meta = entry.meta_blob ?? entry.meta
      if (typeof entry.tx_blob !== 'string' || typeof meta !== 'string') return null
      entries.push({ hash: hashes.hashSignedTx(entry.tx_blob).toUpperCase(), transaction: decode(entry.tx_blob), meta: decode(meta) })
    }
    const tree = entries.map(({ transaction, meta }) => ({ ...transaction, metaData: meta }))
    const root = hashes.hashTxTree(tree as unknown as Parameters<ReturnType<typeof xrpl>['hashes']['hashTxTree']>[0])
    return root.toUpperCase() === transactionHash.toUpperCase() ? entries : null
  } catch {
    // A field this codec does not know: the list cannot be checked.
    return null
  }
}

/** A payment's delivered_amount: drops as a string, or an issued-currency amount; null when absent or "unavailable". */
function deliveredAmountOf(meta: object): DeliveredAmount | null {
  const delivered = (meta as { delivered_amount?: unknown }).delivered_amount
  if (typeof delivered === 'string') return delivered === 'unavailable' ? null : delivered
  if (typeof delivered !== 'object' || delivered === null) return null
  const { currency, issuer, value } = delivered as Record<string, unknown>
  if (typeof currency !== 'string' || typeof issuer !== 'string' || typeof value !== 'string') return null
  return { currency, issuer, value }
}

/**
 * What `tx` would answer as delivered_amount for a transaction read from a ledger's list, as rippled fills it in
 * (RPC::insertDeliveredAmount): the metadata's DeliveredAmount, which rippled writes only when less than the Amount
 * arrived; else, for a Payment, CheckCash or AccountDelete that succeeded, its Amount; else nothing.
 */
function deliveredAmountListed({ transaction, meta }: ListedTransaction): unknown {
  if (meta.DeliveredAmount !== undefined) return meta.DeliveredAmount
  const canDeliver = ['Payment', 'CheckCash', 'AccountDelete'].includes(String(transaction.TransactionType))
  return canDeliver && meta.TransactionResult === 'tesSUCCESS' ? transaction.Amount : undefined
}

/**
 * A ledger's header from `ledger_data` (its binary form, as hashed: addRaw): its index, its transaction_hash, and when
 * it closed (null for a close time of 0, which rippled leaves unset). Null when absent or unreadable.
 */
function ledgerHeaderOf(ledgerData: unknown): { ledgerIndex: number; transactionHash: string; closedAtMs: number | null } | null {
  if (typeof ledgerData !== 'string') return null
  try {
    const header = decodeLedgerData(ledgerData) as { ledger_index: number; transaction_hash: string; close_time: number }
    const closedAtMs = header.close_time === 0 ? null : xrpl().rippleTimeToUnixTime(header.close_time)
    return { ledgerIndex: header.ledger_index, transactionHash: header.transaction_hash, closedAtMs }
  } catch {
    return null
  }
}

/** When the ledger closed, from close_time_iso (API v2, which xrpl.js asks for); null when absent or not a time. */
function closedAtMsOf(result: { close_time_iso?: unknown }): number | null {
  if (typeof result.close_time_iso !== 'string') return null
  const ms = Date.parse(result.close_time_iso)
  return Number.isFinite(ms) ? ms : null
}

function rippledErrorCode(error: unknown): string | undefined {
  if (!(error instanceof xrpl().RippledError)) return undefined
  const data = error.data as { error?: unknown } | undefined
  return typeof data?.error === 'string' ? data.error : undefined
}

function unavailable(cause: unknown): XrplNodeUnavailableError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new XrplNodeUnavailableError(`The XRPL node cannot be reached: ${reason}`, { cause })
}

/** A rippled error reply not handled by the caller means the node refuses service (tooBusy, noNetwork, notSynced...). */
function asUnavailable(error: unknown): XrplNodeUnavailableError {
  if (error instanceof XrplNodeUnavailableError) return error
  const reason = error instanceof Error ? error.message : String(error)
  return new XrplNodeUnavailableError(`The XRPL node refused the request: ${reason}`, { cause: error })
}
