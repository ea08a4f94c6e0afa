/**
 * One plain address (local@domain), nothing nodemailer would read as a list or a display name: given
 * `owner@acme.example,other@example.com` it sends to both, and given `owner@acme.example`, a line break and
 * `Bcc: other@example.com`, to the other alone. The mailer sends to no other address, so whatever sets one (the
 * command line, an identity provider's claim) is held to the same rule.
 */
const ONE_ADDRESS = /^[^\s\p{Cc}@,;:<>"()[\]\\]+@[^\s\p{Cc}@,;:<>"()[\]\\]+$/u

export function isOneEmailAddress(address: string): boolean {
  return ONE_ADDRESS.test(address)
}
