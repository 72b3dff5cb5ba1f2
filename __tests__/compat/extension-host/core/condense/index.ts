// The caller's condense module after the one-line swap, as the extension's tree holds it.
export * from '../../../../../compat/extension/index.mjs'
