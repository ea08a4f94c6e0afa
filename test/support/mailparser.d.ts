// The part of mailparser's API the tests use; the package ships no types and @types/mailparser is not installed.
declare module 'mailparser' {
  import type { Readable } from 'node:stream'

  interface EmailAddress {
    address?: string
    name: string
  }

  interface AddressObject {
    value: EmailAddress[]
    text: string
  }

  interface ParsedMail {
    subject?: string
    from?: AddressObject
    to?: AddressObject | AddressObject[]
    text?: string
    messageId?: string
    headers: Map<string, unknown>
  }

  export function simpleParser(source: Readable | Buffer | string): Promise<ParsedMail>
}
