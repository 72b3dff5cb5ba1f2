// Answers sized for an agent's context: every tool answers at most ANSWER_CHARS characters, said
// in its description. A tool whose answer can be long (trees, lists, search, grep, usage) answers
// a page: as many items as fit, what it left out, and a `nextCursor` to call it again with.

import { RooStateError } from '../lib/errors.mjs'

/** The most characters a tool answer holds: about 20 000 tokens at four characters a token. */
export const ANSWER_CHARS = 80_000

/** What every tool's description says of its answer's size. */
export const ANSWER_NOTE = 'Answers hold at most 80,000 characters (about 20,000 tokens).'

/** What a paged tool's description says of its pages. */
export const PAGE_NOTE = `${ANSWER_NOTE} A longer answer is a page: it says how many items it left out, and nextCursor, passed back as cursor with the same arguments, gives the next page (null on the last).`

/** The text of an answer: compact JSON. */
export const size = (value) => (typeof value === 'string' ? value.length : JSON.stringify(value).length)

/**
 * The most of `n` items (at least `min`) whose answer `make(k)` fits in `max` characters, and that
 * answer: the largest k by halving then stepping (each try is one `make`).
 * @template T
 * @param {number} n
 * @param {(k: number) => T} make
 * @returns {{ k: number, value: T }}
 */
export function fitCount(n, make, max = ANSWER_CHARS, min = 0) {
  let value = make(n)
  if (size(value) <= max || n <= min) return { k: n, value }
  let lo = min
  let hi = n
  let best = null
  // Invariant: make(hi) does not fit; make(lo) fits or lo == min.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    const v = make(mid)
    if (size(v) <= max) {
      lo = mid
      best = v
    } else {
      hi = mid
    }
  }
  value = best ?? make(lo)
  return { k: lo, value }
}

/** The offset a simple cursor holds (a search or grep: how many results earlier pages gave). */
export function offsetOf(cursor) {
  if (cursor === undefined) return 0
  try {
    const c = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8'))
    if (c?.v === 1 && Number.isInteger(c.offset) && c.offset >= 0) return c.offset
  } catch {
    // said below
  }
  throw new RooStateError('INVALID_ARGUMENT', 'The cursor is not one this server gave (pass the nextCursor of the previous answer unchanged, or none for the first page).')
}

/** The cursor of a page that ends at `offset`. */
export function offsetCursor(offset) {
  return Buffer.from(JSON.stringify({ v: 1, offset }), 'utf8').toString('base64url')
}

/**
 * What a page says of itself: how many it shows of how many, how many it left out, how to go on.
 * @param {{shown: number, total: number, offset?: number, leftOut?: number, nextCursor?: string | null, unit: string}} note
 */
export function pageNote({ shown, total, offset = 0, leftOut, nextCursor, unit }) {
  const left = leftOut ?? Math.max(0, total - offset - shown)
  return {
    shown,
    total,
    leftOut: left,
    nextCursor: nextCursor ?? null,
    ...(nextCursor ? { more: `${left} more ${unit}: call again with the same arguments and cursor set to nextCursor.` } : {}),
  }
}
