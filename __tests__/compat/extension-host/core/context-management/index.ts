// The caller's context-management module after the one-line swap.
export * from '../../../../../compat/extension/index.mjs'
