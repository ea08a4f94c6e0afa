// A Content-Security-Policy header as its directives, so that tests compare policies, not their spelling.
export function cspDirectives(header: unknown): Record<string, string[]> {
  const directives: Record<string, string[]> = {}
  for (const part of String(header ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/)
    if (name) directives[name] = values
  }
  return directives
}
