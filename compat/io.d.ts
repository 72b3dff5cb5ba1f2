/**
 * The outside modules compat reaches through (compat/io.js). A caller hands over its own modules
 * that a legacy module used to import, so that its tests' mocks and spies of those modules reach
 * compat; docs/drop-in.md lists the wiring lines of each module.
 */
export declare function use(modules: Record<string, unknown>): void
