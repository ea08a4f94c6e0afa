// The payloads the floor server holds and its GET run reads (bench/floor-server.ts, bench/run.ts): uuids made from
// their index, so that both sides name the same rows without sharing a list.

/** The i-th floor payload's uuid; `floorUuidSql(column)` is the same in PostgreSQL. */
export const floorUuid = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`

export const floorUuidSql = (index: string) => `'00000000-0000-4000-8000-' || lpad(to_hex(${index}), 12, '0')`
