// A small validator for the JSON Schemas of the tools' inputs (the subset they use: type,
// properties, required, additionalProperties, enum, minimum, maximum, minLength, items). Each
// problem is a sentence naming the argument, so a model can correct its call.

function typeOf(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

function matchesType(v, type) {
  const t = typeOf(v)
  if (type === 'number') return t === 'number' || t === 'integer'
  return t === type
}

function describe(v) {
  const s = JSON.stringify(v)
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}…` : s
}

/**
 * Problems of `value` against `schema`, as sentences (empty when valid).
 * @param {object} schema
 * @param {unknown} value
 * @param {string} [at] where the value is, for messages
 * @returns {string[]}
 */
export function validate(schema, value, at = 'arguments') {
  const problems = []
  if (!schema || typeof schema !== 'object') return problems
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (!types.some((t) => matchesType(value, t))) {
      problems.push(`${at} must be ${types.map((t) => (t === 'integer' ? 'a whole number' : t === 'object' ? 'an object' : t === 'array' ? 'an array' : `a ${t}`)).join(' or ')}, got ${describe(value)}`)
      return problems
    }
  }
  if (schema.enum && !schema.enum.includes(value)) {
    problems.push(`${at} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}, got ${describe(value)}`)
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) problems.push(`${at} must be at least ${schema.minimum}, got ${value}`)
    if (typeof schema.maximum === 'number' && value > schema.maximum) problems.push(`${at} must be at most ${schema.maximum}, got ${value}`)
  }
  if (typeof value === 'string' && typeof schema.minLength === 'number' && value.length < schema.minLength) {
    problems.push(schema.minLength === 1 ? `${at} must not be empty` : `${at} must have at least ${schema.minLength} characters`)
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => problems.push(...validate(schema.items, item, `${at}[${i}]`)))
  }
  if (typeOf(value) === 'object') {
    const props = schema.properties ?? {}
    for (const name of schema.required ?? []) {
      if (value[name] === undefined) problems.push(`${at === 'arguments' ? '' : `${at}.`}${name} is required`)
    }
    for (const [name, v] of Object.entries(value)) {
      const where = at === 'arguments' ? name : `${at}.${name}`
      if (props[name]) {
        if (v !== undefined) problems.push(...validate(props[name], v, where))
      } else if (schema.additionalProperties === false) {
        const known = Object.keys(props)
        problems.push(`${where} is not an argument of this tool${known.length ? ` (arguments: ${known.join(', ')})` : ''}`)
      } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        problems.push(...validate(schema.additionalProperties, v, where))
      }
    }
  }
  return problems
}
