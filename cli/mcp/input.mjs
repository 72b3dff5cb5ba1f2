// Tool inputs: zod schemas, listed as JSON Schema (draft-07, the conversion the SDK's McpServer
// uses) and parsed by zod. Parse failures become sentences naming the argument, so a model can
// correct its call.
import { z } from 'zod'

/**
 * The input schema of a tool from its zod shape: unknown arguments are refused.
 * @param {import('zod').ZodRawShape} shape
 */
export function inputOf(shape) {
  return z.strictObject(shape)
}

/**
 * An input that accepts more arguments than it names (the legacy names, whose callers sent extra
 * fields the legacy server ignored).
 * @param {import('zod').ZodRawShape} shape
 */
export function looseInputOf(shape) {
  return z.looseObject(shape)
}

/**
 * The JSON Schema listed for an input.
 * @param {import('zod').ZodType} schema
 */
export function jsonSchemaOf(schema) {
  const { $schema, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-7' })
  return rest
}

/**
 * The JSON Schema listed as a tool's output schema (what its structured content holds).
 * @param {import('zod').ZodType} schema
 */
export function outputSchemaOf(schema) {
  const { $schema, ...rest } = z.toJSONSchema(schema, { io: 'output', target: 'draft-7' })
  return rest
}

function pathText(path) {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[') || 'arguments'
}

function shown(value) {
  const s = JSON.stringify(value)
  return s === undefined ? String(value) : s.length > 60 ? `${s.slice(0, 57)}…` : s
}

/** Argument names of an object schema at `path` (for the "not an argument" sentence). */
function namesAt(schema, path) {
  let node = schema
  for (const key of path) {
    node = node?.shape?.[key]
    while (node && !node.shape && node.unwrap) node = node.unwrap()
  }
  return node?.shape ? Object.keys(node.shape) : []
}

function sentence(schema, issue) {
  const at = pathText(issue.path)
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => {
        const known = namesAt(schema, issue.path)
        return `${pathText([...issue.path, k])} is not an argument of this tool${known.length ? ` (arguments: ${known.join(', ')})` : ''}`
      })
    case 'invalid_type':
      if (issue.input === undefined) return `${at} is required`
      return `${at} must be ${issue.expected === 'int' ? 'a whole number' : issue.expected}, got ${shown(issue.input)}`
    case 'invalid_value':
      return `${at} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${shown(issue.input)}`
    case 'too_small':
      if (issue.origin === 'string' && issue.minimum === 1) return `${at} must not be empty`
      return `${at} must be at least ${issue.minimum}${issue.origin === 'string' ? ' characters long' : ''}, got ${shown(issue.input)}`
    case 'too_big':
      return `${at} must be at most ${issue.maximum}, got ${shown(issue.input)}`
    default:
      return `${at}: ${issue.message}`
  }
}

/**
 * `args` parsed by `schema`: the parsed value, or the problems as sentences.
 * @param {import('zod').ZodType} schema
 * @param {unknown} args
 * @returns {{ok: boolean, value?: any, problems?: string[]}} `problems` when not `ok`
 */
export function parseInput(schema, args) {
  const r = schema.safeParse(args, { reportInput: true })
  if (r.success) return { ok: true, value: r.data }
  return { ok: false, problems: r.error.issues.flatMap((i) => sentence(schema, i)) }
}
